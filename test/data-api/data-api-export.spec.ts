import { join } from 'node:path';
import { loadValidApp, readDirectoryFiles } from '@tessera/app-config';
import { startTestHost, type TestHost } from '../support/test-host';
import { clientLogin, dataApi } from './data-api-support';

// An App Services CLI export (root_config.json layout, https_endpoints/data_api_config.json with
// return_type EJSON and create_user_on_auth false) deployed without edits serves its Data API.
describe('Data API of an App Services export', () => {
  let host: TestHost;
  let clientAppId: string;

  beforeAll(async () => {
    host = await startTestHost({ services: ['graphql-gateway'] });
    const files = await readDirectoryFiles(join(__dirname, '../../libs/app-config/src/__fixtures__/appservices'));
    ({ clientAppId } = await host.createApp('fieldnotes', loadValidApp(files).app));
  });

  afterAll(async () => {
    await host?.close();
  });

  it('serves the exported configuration: EJSON answers, no user created on first call, the export rules', async () => {
    const register = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/local-userpass/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'lee@example.com', password: 'field-notes-1' }) });
    expect(register.status).toBe(201);
    const credentials = { email: 'lee@example.com', password: 'field-notes-1' };
    const notes = { dataSource: 'mongodb-atlas', database: 'fieldnotes', collection: 'notes' };

    // create_user_on_auth is false: a registered account that never logged in has no user yet.
    expect(await dataApi(host, clientAppId, 'find', { ...notes, filter: {} }, { headers: credentials })).toMatchObject({ status: 401, body: { error_code: 'InvalidSession' } });
    const { userId } = await clientLogin(host, clientAppId, 'local-userpass', { username: credentials.email, password: credentials.password });

    const inserted = await dataApi(host, clientAppId, 'insertOne', { ...notes, document: { owner_id: userId, body: 'first note', shared: false } }, { headers: credentials });
    expect(inserted.status).toBe(201);
    expect(inserted.contentType).toBe('application/ejson');
    expect(inserted.body['insertedId']).toEqual({ $oid: expect.stringMatching(/^[0-9a-f]{24}$/) });
    const mine = await dataApi(host, clientAppId, 'findOne', { ...notes, filter: {}, projection: { _id: 0, body: 1 } }, { headers: credentials });
    expect(mine.body).toEqual({ document: { body: 'first note' } });

    // Another user sees only shared notes, as the export's "reader" role allows.
    const stranger = await host.anonymousLogin(clientAppId);
    const theirs = await dataApi(host, clientAppId, 'find', { ...notes, filter: {} }, { headers: { authorization: `Bearer ${stranger.accessToken}`, accept: 'application/json' } });
    expect(theirs).toMatchObject({ status: 200, body: { documents: [] } });
    // The export disables API keys: an API key is refused.
    expect((await dataApi(host, clientAppId, 'find', { ...notes, filter: {} }, { headers: { apiKey: 'k'.repeat(64) } })).status).toBeGreaterThanOrEqual(400);
  });
});
