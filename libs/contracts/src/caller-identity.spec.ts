import { ObjectId } from 'bson';
import { callerUserOf, CallerUserSchema, ruleUserOf } from './index';

const record = {
  _id: 'u1',
  type: 'normal' as const,
  data: { email: 'ann@example.com', joined: new Date('2024-01-02T03:04:05Z') },
  identities: [{ id: 'ann@example.com', provider_type: 'local-userpass', provider_id: 'p1', provider_data: { email: 'ann@example.com' } }],
};

describe('the caller identity', () => {
  it('is made from a user record as context.user shows it: canonical EJSON documents, identities with provider_type only', () => {
    const user = callerUserOf(record, { team: new ObjectId('5f0c5e0b9d1e8a2b3c4d5e6f'), level: 3 });
    expect(user).toEqual({
      id: 'u1',
      type: 'normal',
      data: { email: 'ann@example.com', joined: { $date: { $numberLong: '1704164645000' } } },
      custom_data: { team: { $oid: '5f0c5e0b9d1e8a2b3c4d5e6f' }, level: { $numberInt: '3' } },
      identities: [{ id: 'ann@example.com', provider_type: 'local-userpass' }],
    });
    expect(CallerUserSchema.parse(user)).toEqual(user);
  });

  it('has no custom_data when the app keeps none', () => {
    expect(callerUserOf(record, null)).not.toHaveProperty('custom_data');
  });

  it('keeps empty documents empty, both ways (an anonymous user has no metadata)', () => {
    const user = callerUserOf({ ...record, data: {} }, {});
    expect(user).toMatchObject({ data: {}, custom_data: {} });
    expect(ruleUserOf(user)).toMatchObject({ data: {}, custom_data: {} });
  });

  it('gives the rules %%user with BSON values, providerType identities and the documented defaults', () => {
    const ruleUser = ruleUserOf(callerUserOf(record, { level: 3 }));
    expect(ruleUser).toMatchObject({ id: 'u1', type: 'normal', identities: [{ id: 'ann@example.com', providerType: 'local-userpass' }] });
    expect(ruleUser.data?.['joined']).toEqual(new Date('2024-01-02T03:04:05Z'));
    expect(ruleUser.custom_data?.['level']).toBe(3);
    expect(ruleUserOf({ id: 'bare' })).toEqual({ id: 'bare', type: 'normal', data: {}, custom_data: {}, identities: [] });
  });

  it('derives %%user once per identity object, so compiled rules see one user object per request', () => {
    const user = callerUserOf(record);
    expect(ruleUserOf(user)).toBe(ruleUserOf(user));
    expect(ruleUserOf({ ...user })).not.toBe(ruleUserOf(user));
  });
});
