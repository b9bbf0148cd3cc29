import { createDataSourceClient, type DataSourceClient } from '@tessera/datastore';
import { makeTempDir } from '@tessera/testing';
import { AppUserStore, SESSIONS_LISTED } from './app-users';

describe('AppUserStore', () => {
  const dir = makeTempDir('tessera-app-users-');
  let client: DataSourceClient;
  let store: AppUserStore;

  beforeAll(async () => {
    client = createDataSourceClient({ clusterName: 'platform-test', dataDir: dir.path });
    store = new AppUserStore(client, '65a000000000000000000001');
    await store.init();
  });

  afterAll(async () => {
    await client.close();
    dir.remove();
  });

  it('stores an end on each session and sweeps the ended sessions of a user at its next login', async () => {
    const user = await store.createUser('normal');
    const ended = await store.createSession(user._id, 'd1', -1);
    const live = await store.createSession(user._id, 'd2', 3600);
    expect(live.expiresAt.getTime()).toBeGreaterThan(Date.now() + 3_500_000);
    expect(await store.findSession(ended._id)).toBeNull();
    expect(await store.findSession(live._id)).not.toBeNull();
    expect(await store.deleteSession(live._id)).toBe(true);
    expect(await store.findSession(live._id)).toBeNull();
  });

  it("lists a user's live sessions newest first, records a refresh as their last use, and ends only the user's own", async () => {
    const user = await store.createUser('normal');
    const other = await store.createUser('normal');
    const first = await store.createSession(user._id, 'phone', 3600);
    const second = await store.createSession(user._id, 'laptop', 3600);
    const theirs = await store.createSession(other._id, 'tablet', 3600);
    expect((await store.listSessions(user._id)).map((session) => session.deviceId)).toEqual(['laptop', 'phone']);
    expect((await store.listSessions(user._id))[1].lastUsedAt).toBeUndefined();
    await store.touchSession(first._id);
    const touched = (await store.listSessions(user._id)).find((session) => session._id === first._id)!;
    expect(touched.lastUsedAt).toBeInstanceOf(Date);
    expect(touched.lastUsedAt!.getTime()).toBeGreaterThanOrEqual(first.createdAt.getTime());
    expect(await store.deleteUserSession(user._id, theirs._id)).toBe(false);
    expect(await store.findSession(theirs._id)).not.toBeNull();
    expect(await store.deleteUserSession(user._id, second._id)).toBe(true);
    expect((await store.listSessions(user._id)).map((session) => session._id)).toEqual([first._id]);
  });

  it(`lists the newest ${SESSIONS_LISTED} sessions of a user who logged in more often`, async () => {
    const user = await store.createUser('normal');
    const created = [];
    for (let i = 0; i < SESSIONS_LISTED + 3; i++) created.push(await store.createSession(user._id, `device-${i}`, 3600));
    const listed = await store.listSessions(user._id);
    expect(listed).toHaveLength(SESSIONS_LISTED);
    expect(listed[0]._id).toBe(created.at(-1)!._id);
    expect(listed.map((session) => session._id)).not.toContain(created[0]._id);
  });

  it('creates its indexes idempotently, also from a second instance', async () => {
    await new AppUserStore(client, '65a000000000000000000001').init();
  });

  it('gives an identity one owner: a second attach of the same identity fails', async () => {
    const first = await store.createUser('normal');
    const second = await store.createUser('normal');
    const identity = { id: 'sub-1', provider_type: 'custom-token', provider_id: 'p1' };
    expect(await store.addIdentity(first._id, identity)).toBe(true);
    expect(await store.addIdentity(second._id, identity)).toBe(false);
    expect((await store.userByIdentity('custom-token', 'sub-1'))?._id).toBe(first._id);
    expect((await store.findUser(first._id))?.identities).toEqual([identity]);
  });

  it('consumes email/password tokens once, for their purpose only', async () => {
    await store.createAccount('t@example.com', 'hash');
    const { token, tokenId } = await store.issueToken('t@example.com', 'confirm', 60);
    expect(await store.consumeToken(tokenId, token, 'reset')).toBeNull();
    expect(await store.consumeToken(tokenId, 'wrong', 'confirm')).toBeNull();
    expect(await store.consumeToken(tokenId, token, 'confirm')).toBe('t@example.com');
    expect(await store.consumeToken(tokenId, token, 'confirm')).toBeNull();
    const expired = await store.issueToken('t@example.com', 'reset', -1);
    expect(await store.consumeToken(expired.tokenId, expired.token, 'reset')).toBeNull();
  });

  it('keeps server API keys with a server user of their own, and deletes both together', async () => {
    const created = await store.createServerApiKey('backend');
    expect(created).not.toBeNull();
    expect((await store.findUser(created!.key.userId))?.type).toBe('server');
    expect((await store.apiKeyBySecret(created!.secret))?._id).toBe(created!.key._id);
    expect(await store.createServerApiKey('backend')).toBeNull();
    expect((await store.serverApiKeys()).map((key) => key.name)).toEqual(['backend']);
    expect(await store.deleteServerApiKey(created!.key._id)).toBe(true);
    expect(await store.findUser(created!.key.userId)).toBeNull();
    expect(await store.apiKeyBySecret(created!.secret)).toBeNull();
  });

  it('ends every session of a user who is disabled', async () => {
    const user = await store.createUser('normal');
    const session = await store.createSession(user._id, 'device', 60);
    expect(await store.setUserDisabled(user._id, true)).toBe(true);
    expect(await store.findSession(session._id)).toBeNull();
    expect((await store.findUser(user._id))?.disabled).toBe(true);
    expect(await store.setUserDisabled('65a0000000000000000000ff', true)).toBe(false);
  });
});
