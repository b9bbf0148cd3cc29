import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { hashPassword } from '@tessera/credentials';
import { createDataSourceClient, type DataSourceClient } from '@tessera/datastore';
import { makeTempDir } from '@tessera/testing';
import { AdminApiKeyStore } from './admin-api-keys';
import { AdminUserStore } from './admin-users';
import { DatastoreAppRegistry } from './app-registry';
import { DeploymentStore } from './deployment-store';
import { DraftStore } from './draft-store';
import { importFilePlatformState } from './file-import';
import { DatastoreLogStore } from './log-store';
import { PlatformDatabase } from './platform-database';
import { SecretStore } from './secret-store';
import { SecretsCipher } from './secrets-cipher';
import { SigningKeyStore } from './signing-keys';
import { SyncStateStore } from './sync-state-store';

const appId = '65b000000000000000000001';
const cipher = new SecretsCipher([Buffer.alloc(32, 3)], 'a test key');
const base64 = (text: string): string => Buffer.from(text).toString('base64');

/** A data directory as the file stores of the previous release left it. */
async function writePreviousRelease(dataDir: string): Promise<void> {
  const write = (relative: string, content: unknown): void => {
    const path = join(dataDir, 'platform', relative);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  };
  write('admin.json', {
    groupId: '65b0000000000000000000aa',
    users: [{ _id: '65b0000000000000000000ab', username: 'admin', passwordHash: await hashPassword('old password'), groupIds: ['65b0000000000000000000aa'], created: '2026-01-01T00:00:00.000Z' }],
    sessions: { '65b0000000000000000000ac': '65b0000000000000000000ab' },
  });
  write('admin-api-keys.json', [{ _id: '65b0000000000000000000ad', name: 'ci', public_key: 'abcdef012345', user_id: '65b0000000000000000000ab', disabled: false, created: 1_700_000_000, private_key_hash: await hashPassword('private') }]);
  write('keys/admin.json', { key: Buffer.alloc(32, 5).toString('base64'), created: '2026-01-01T00:00:00.000Z' });
  const app = { _id: appId, client_app_id: 'todo-abcde', name: 'todo', group_id: '65b0000000000000000000aa', domain_id: '65b0000000000000000000ae', location: 'US-VA', deployment_model: 'GLOBAL', environment: '', provider_region: 'local', product: 'standard', last_used: 1, last_modified: 1 };
  write(`apps/${appId}/app.json`, app);
  for (const version of [1, 2]) {
    write(`apps/${appId}/deployments/0000000${version}.json`, { _id: `65b00000000000000000010${version}`, app_id: appId, version, deployed_at: version, origin: 'import', status: 'successful', files: { 'config.json': base64(`{"version":${version}}`) } });
  }
  write(`apps/${appId}/draft.json`, { _id: '65b000000000000000000200', user_id: '65b0000000000000000000ab', app: { _id: appId }, created: 3, files: { 'config.json': base64('{"draft":true}') } });
  write(`apps/${appId}/secrets.json`, [{ _id: '65b000000000000000000300', name: 'apiKey', value: 's3cr3t' }]);
  write(`apps/${appId}/sync-state.json`, { everEnabled: true, enabled: true, resetEpoch: 2 });
  write(
    `apps/${appId}/logs.jsonl`,
    [
      { _id: '65b000000000000000000401', type: 'FUNCTION', messages: ['first'], started: '2026-01-01T00:00:00.000Z', completed: '2026-01-01T00:00:00.000Z' },
      { _id: '65b000000000000000000402', type: 'FUNCTION', messages: ['second'], started: '2026-01-02T00:00:00.000Z', completed: '2026-01-02T00:00:00.000Z' },
    ]
      .map((entry) => JSON.stringify(entry))
      .join('\n') + '\n{"torn',
  );
  write('mail/outbox.jsonl', '');
}

describe('importFilePlatformState', () => {
  const dir = makeTempDir('tessera-import-');
  let client: DataSourceClient;
  let db: PlatformDatabase;

  beforeAll(() => {
    client = createDataSourceClient({ clusterName: 'tessera-platform', dataDir: dir.path });
    db = new PlatformDatabase(client);
  });

  afterAll(async () => {
    await client.close();
    dir.remove();
  });

  it('moves the state a previous release kept in files into the platform database, once', async () => {
    expect(await importFilePlatformState(dir.path, db)).toBeUndefined();
    await writePreviousRelease(dir.path);
    const summary = await importFilePlatformState(dir.path, db);
    expect(summary).toMatchObject({ apps: 1, deployments: 2, logEntries: 2 });

    expect((await new DatastoreAppRegistry(db).getByClientAppId('todo-abcde'))._id).toBe(appId);
    const current = await new DeploymentStore(db).current(appId);
    expect(current?.record.version).toBe(2);
    expect(Buffer.from(current!.files.get('config.json')!).toString()).toBe('{"version":2}');
    expect((await new DeploymentStore(db).list(appId)).map((record) => record.version)).toEqual([2, 1]);
    const draft = await new DraftStore(db).get(appId);
    expect(draft).toMatchObject({ _id: '65b000000000000000000200', app: { _id: appId } });
    expect(Buffer.from((await new DraftStore(db).files(appId, draft!._id))!.get('config.json')!).toString()).toBe('{"draft":true}');
    expect(await new SecretStore(db, cipher).values(appId)).toEqual({ apiKey: 's3cr3t' });
    expect(await new SyncStateStore(db).get(appId)).toEqual({ everEnabled: true, enabled: true, resetEpoch: 2 });
    expect((await new DatastoreLogStore(db).list(appId)).map((entry) => entry.messages[0])).toEqual(['second', 'first']);

    const admins = new AdminUserStore(db);
    expect(await admins.groupId()).toBe('65b0000000000000000000aa');
    expect(await admins.authenticate('admin', 'old password')).toMatchObject({ _id: '65b0000000000000000000ab' });
    expect((await admins.sessionUser('65b0000000000000000000ac'))?.username).toBe('admin');
    expect(await new AdminApiKeyStore(db).authenticate('abcdef012345', 'private')).toBe('65b0000000000000000000ab');
    // Tokens issued before the upgrade still verify: the admin key is the imported one.
    expect(await new SigningKeyStore(db, cipher).get('admin')).toEqual(Buffer.alloc(32, 5));
    // What the files held in clear is sealed at boot once imported, and reads back the same.
    expect(await new SecretStore(db, cipher).sealStored()).toBe(1);
    expect(await new SigningKeyStore(db, cipher).sealStored()).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(await (await db.collection('secrets')).find({}).toArray())).not.toContain('s3cr3t');
    expect(await new SecretStore(db, cipher).values(appId)).toEqual({ apiKey: 's3cr3t' });
    expect(await new SigningKeyStore(db, cipher).get('admin')).toEqual(Buffer.alloc(32, 5));

    // The files moved aside (the mail outbox stays), so the next start imports nothing.
    expect(readdirSync(join(dir.path, 'platform'))).toEqual(['mail']);
    expect(existsSync(join(summary!.movedTo, 'apps', appId, 'app.json'))).toBe(true);
    expect(await importFilePlatformState(dir.path, db)).toBeUndefined();
  });
});
