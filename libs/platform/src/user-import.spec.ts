import { parseUserListing } from './user-import';

const user = (extra: Record<string, unknown> = {}) => ({
  _id: '6371A1B2C3D4E5F601020301',
  identities: [{ id: '6371a1b2c3d4e5f6010203aa', provider_type: 'local-userpass', provider_id: 'p1', provider_data: { email: 'ada@example.com' } }],
  type: 'normal',
  data: { email: 'ada@example.com' },
  creation_date: 1668358578,
  last_authentication_date: 0,
  disabled: false,
  ...extra,
});

describe('reading an App Services user listing', () => {
  it('keeps the id (lower-cased), keys email/password identities by their email, and reads dates in seconds', () => {
    const [parsed] = parseUserListing([user()]);
    expect(parsed.error).toBeUndefined();
    expect(parsed.imported?.user).toMatchObject({ _id: '6371a1b2c3d4e5f601020301', type: 'normal', disabled: false, createdAt: new Date(1668358578 * 1000) });
    expect(parsed.imported?.user.identities[0]).toMatchObject({ id: 'ada@example.com', provider_type: 'local-userpass' });
    expect(parsed.imported?.user.lastLoginAt).toBeUndefined();
  });

  it('takes `{ users: [...] }`, ISO and EJSON dates', () => {
    const parsed = parseUserListing({ users: [user({ creation_date: '2022-11-13T16:56:18Z' }), user({ creation_date: { $date: { $numberLong: '1668358578000' } } })] });
    expect(parsed.map((item) => item.imported?.user.createdAt.toISOString())).toEqual(['2022-11-13T16:56:18.000Z', '2022-11-13T16:56:18.000Z']);
  });

  it('refuses each bad user on its own, naming the field', () => {
    const parsed = parseUserListing([
      user({ _id: 'abc' }),
      user({ identities: [] }),
      user({ type: 'admin' }),
      user({ identities: [user().identities[0], user().identities[0]] }),
      user({ api_keys: [{ _id: '6371a1b2c3d4e5f6010203ff', name: 'k', key: 'x'.repeat(32) }] }),
      user(),
    ]);
    expect(parsed.map((item) => item.error?.split(':')[0])).toEqual(['_id', 'identities', 'type', 'identities', 'api_keys', undefined]);
  });

  it('refuses what is not a listing', () => {
    expect(() => parseUserListing({ hello: 'world' })).toThrow(/JSON array/);
  });
});
