import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir, startServerProcess, type ServerProcess } from '@tessera/testing';
import * as Realm from 'realm-web';
import { tessera } from './tessera-cli';

// The web todo template end to end: `tessera apps create --template web.mql.todo`, then the client's own
// preset configuration (frontend/config.js) used with realm-web, as the browser app does.
describe('the web todo template client', () => {
  const dataDir = makeTempDir('tessera-template-data-');
  const work = makeTempDir('tessera-template-work-');
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'template-password' } });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
    work.remove();
  });

  it('reaches its new app with the preset app id: anonymous login, addItem, then its own items', async () => {
    const env = { TESSERA_CONFIG_DIR: join(work.path, 'config') };
    expect((await tessera(['login', '--url', server.url, '--username', 'admin', '--password', 'template-password'], env)).code).toBe(0);
    const created = await tessera(['apps', 'create', '--name', 'todo-web', '--template', 'web.mql.todo', '--local', join(work.path, 'todo-web')], env);
    expect(created.code, created.stderr).toBe(0);

    const configJs = readFileSync(join(work.path, 'todo-web', 'frontend', 'config.js'), 'utf8');
    const [, appId] = /appId: '([^']+)'/.exec(configJs)!;
    const [, baseUrl] = /baseUrl: '([^']+)'/.exec(configJs)!;
    expect(appId).toMatch(/^todo-web-[a-z]{5}$/);

    const app = new Realm.App({ id: appId, baseUrl: baseUrl });
    const user = await app.logIn(Realm.Credentials.anonymous());
    const insertedId = await user.callFunction('addItem', 'write the report');
    expect(String(insertedId)).toMatch(/^[0-9a-f]{24}$/);
    const items = user.mongoClient('mongodb-atlas').db('todo').collection<{ _id: unknown; summary: string; owner_id: string }>('items');
    const mine = await items.find({ owner_id: user.id });
    expect(mine.map((item) => item.summary)).toEqual(['write the report']);

    const stranger = await new Realm.App({ id: appId, baseUrl: baseUrl }).logIn(Realm.Credentials.anonymous(false));
    expect(await stranger.mongoClient('mongodb-atlas').db('todo').collection('items').find({})).toEqual([]);
  });
});
