import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, makeTempDir, repositoryRoot, startServerProcess, type ServerProcess } from '@tessera/testing';
import * as Realm from 'realm-web';
import { snapshot, tessera } from './tessera-cli';

// An app exactly as the App Services CLI (`appservices pull`) left it: root_config.json, environments/,
// functions/config.json with sources in subdirectories (one not in the manifest), https_endpoints/,
// data_sources/ with rules, schemas and relationships, a trigger, a custom resolver, flexible sync,
// and the CLI's .mdb/ metadata. Pushed with the tessera CLI, run as a subprocess.
const FIXTURE = join(repositoryRoot, 'libs', 'app-config', 'src', '__fixtures__', 'appservices');
// Each step starts the CLI several times; on a loaded machine one start can take seconds.
const CLI_TIMEOUT_MS = 120_000;

describe('moving an App Services CLI export to Tessera', () => {
  const dataDir = makeTempDir('tessera-appservices-data-');
  const work = makeTempDir('tessera-appservices-work-');
  let server: ServerProcess;
  let env: Record<string, string>;
  let appId: string;

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'appservices-test-password' } });
    env = { TESSERA_CONFIG_DIR: join(work.path, 'config') };
    const login = await tessera(['login', '--url', server.url, '--username', 'admin', '--password', 'appservices-test-password'], env);
    expect(login.code, login.stderr).toBe(0);
    const created = await tessera(['apps', 'create', '--name', 'fieldnotes', '--local', join(work.path, 'empty'), '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    appId = (JSON.parse(created.stdout) as { client_app_id: string }).client_app_id;
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
    work.remove();
  });

  it('pushes the export unchanged, warning about the function the manifest does not list', async () => {
    const local = join(work.path, 'fieldnotes-export');
    cpSync(FIXTURE, local, { recursive: true });
    const push = await tessera(['push', '--remote', appId, '--local', local, '--yes'], env);
    expect(push.code, push.stderr).toBe(0);
    expect(push.stdout).toMatch(new RegExp(`Deployed \\d+ changed file\\(s\\) to ${appId}`));
    expect(push.stderr).toContain('Warning: functions/util/slugify.js: function "util/slugify" has no configuration in functions/config.json');
    // The same directory again: the defaulted config is now deployed, nothing changes.
    const again = await tessera(['push', '--remote', appId, '--local', local, '--yes'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('nothing to push');
  }, CLI_TIMEOUT_MS);

  it('serves its functions to clients: nested names, the defaulted one, and the selected environment', async () => {
    const app = new Realm.App({ id: appId, baseUrl: server.url });
    const user = await app.logIn(Realm.Credentials.anonymous());
    await expect(user.functions.callFunction('notes/summarize', 'field notes from a long walk by the river', 3)).resolves.toBe('Field notes from...');
    await expect(user.functions.callFunction('util/slugify', 'Notes From The Field!')).resolves.toBe('notes-from-the-field');
    // context.environment: root_config.json selects production, whose values come from environments/production.json.
    await expect(user.functions.callFunction('greet', 'Ada')).resolves.toBe('Welcome, Ada! (production)');
    // Private functions of the manifest stay private.
    await expect(user.functions.callFunction('notes/format/title', 'x')).rejects.toThrow(/private/i);
    // The data source's rules came from data_sources/<service>/<db>/<collection>/rules.json.
    const notes = user.mongoClient('mongodb-atlas').db('fieldnotes').collection<{ _id: unknown; owner_id: string; title: string; shared?: boolean }>('notes');
    await notes.insertOne({ owner_id: user.id, title: 'first light', shared: false });
    await expect(notes.insertOne({ owner_id: 'someone-else', title: 'forged' })).rejects.toBeDefined();
    await eventually(async () => expect((await notes.find({})).map((n) => n.title)).toEqual(['first light']), { timeoutMs: 10_000 });
    // The database trigger of triggers/noteInserted.json ran its nested function on the insert.
    const profiles = user.mongoClient('mongodb-atlas').db('fieldnotes').collection<{ _id: unknown; owner_id: string; noteCount: number }>('profiles');
    await eventually(async () => expect(await profiles.findOne({ owner_id: user.id })).toMatchObject({ noteCount: 1 }), { timeoutMs: 20_000 });
    // Rules see %%environment too: this role applies only in production, with production's values.
    const announcements = user.mongoClient('mongodb-atlas').db('fieldnotes').collection<{ _id: unknown; text: string }>('announcements');
    await announcements.insertOne({ text: 'open for notes' });
    expect((await announcements.find({})).map((a) => a.text)).toEqual(['open for notes']);
  }, CLI_TIMEOUT_MS);

  it('pulls back in the current layout, with templates resolved and the defaulted config written out', async () => {
    const back = join(work.path, 'fieldnotes-current');
    const pull = await tessera(['pull', '--remote', appId, '--local', back], env);
    expect(pull.code, pull.stderr).toBe(0);
    const files = Object.keys(await snapshot(back));
    expect(files).not.toContain('root_config.json');
    expect(files.some((path) => path.startsWith('data_sources/') || path.startsWith('.mdb/'))).toBe(false);
    expect(files).toEqual(
      expect.arrayContaining([
        'config.json',
        'functions/notes/format/title/source.js',
        'functions/util/slugify/config.json',
        'services/mongodb-atlas/rules/fieldnotes.notes.json',
        'triggers/noteInserted.json',
        'http_endpoints/config.json',
        'environments/production.json',
      ]),
    );
    const json = (path: string) => JSON.parse(readFileSync(join(back, path), 'utf8')) as Record<string, unknown>;
    expect(json('functions/util/slugify/config.json')).toMatchObject({ name: 'util/slugify', private: false, run_as_system: false });
    expect(json('services/mongodb-atlas/config.json')).toMatchObject({ config: { clusterName: 'fieldnotes-prod' } });
    expect(json('config.json')).toMatchObject({ app_id: appId, environment: 'production', provider_region: 'aws-eu-west-1' });
    expect(json('services/mongodb-atlas/rules/fieldnotes.notes.json')).toMatchObject({ schema: { title: 'Note' }, relationships: { author: { foreign_key: '_id' } } });
  }, CLI_TIMEOUT_MS);
});
