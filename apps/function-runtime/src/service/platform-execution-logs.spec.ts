import { createDataSourceClient, type DataSourceClient } from '@tessera/datastore';
import { DatastoreLogStore, PlatformDatabase } from '@tessera/platform';
import { eventually, makeTempDir } from '@tessera/testing';
import { FunctionRuntimeService } from '../function-runtime.service';
import { NodeHttpPort } from '../ports/http.port';
import { ALICE, APP } from '../testing/runtime-fixture';
import { InMemoryAppFunctions, InMemoryDataAccess, InMemoryUsers, InMemoryValues } from '../testing/in-memory-ports';
import { PlatformExecutionLogStore } from './platform-execution-logs';

// The runtime's execution logs in the platform database over the embedded engine, as standalone mode runs it.
describe('execution logs in the platform log store', () => {
  const dir = makeTempDir('tessera-execution-logs-');
  let client: DataSourceClient;
  let store: DatastoreLogStore;

  beforeAll(() => {
    client = createDataSourceClient({ clusterName: 'tessera-platform', dataDir: dir.path });
    store = new DatastoreLogStore(new PlatformDatabase(client));
  });

  afterAll(async () => {
    await client.close();
    dir.remove();
  });

  function runtimeWith(logs: PlatformExecutionLogStore): FunctionRuntimeService {
    const functions = new InMemoryAppFunctions();
    functions.deploy(APP, { hello: 'exports = (name) => { console.log("hi", name); return "hello " + name; };' });
    const users = new InMemoryUsers();
    users.add(ALICE);
    return new FunctionRuntimeService({
      dependencies: { functions, dataAccess: new InMemoryDataAccess(), values: new InMemoryValues(), users, logs, http: new NodeHttpPort({}) },
      options: { timeLimitMs: 2_000, memoryLimitMb: 64, sandboxesPerApp: 2 },
    });
  }

  it('writes the entries of a burst of calls promptly, as App Services FUNCTION entries', async () => {
    const runtime = runtimeWith(new PlatformExecutionLogStore(store));
    try {
      await Promise.all(['a', 'b', 'c'].map((name) => runtime.execute({ appId: APP, name: 'hello', arguments: [name], caller: { type: 'user', user: ALICE }, origin: 'client', correlationId: `burst-${name}` })));
      const entries = await eventually(async () => {
        const listed = await store.list(APP, { types: ['FUNCTION'] });
        expect(listed.filter((entry) => String(entry['co_id']).startsWith('burst-'))).toHaveLength(3);
        return listed;
      });
      expect(entries.find((entry) => entry['co_id'] === 'burst-b')).toMatchObject({ type: 'FUNCTION', function_name: 'hello', user_id: ALICE.id, messages: ['hi b'], arguments: '["b"]' });
    } finally {
      await runtime.close();
    }
  });

  it('keeps every entry of a clean stop: closing the runtime writes what waits in the buffer', async () => {
    // An interval no test waits out: only the flush on close can write these entries.
    const runtime = runtimeWith(new PlatformExecutionLogStore(store, 3_600_000));
    await runtime.execute({ appId: APP, name: 'hello', arguments: ['stop'], caller: { type: 'user', user: ALICE }, origin: 'client', correlationId: 'clean-stop' });
    expect(await store.list(APP, { coId: 'clean-stop' })).toEqual([]);
    await runtime.close();
    expect(await store.list(APP, { coId: 'clean-stop' })).toEqual([expect.objectContaining({ type: 'FUNCTION', function_name: 'hello', messages: ['hi stop'] })]);
  });
});
