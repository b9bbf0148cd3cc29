import { type DataSourceClient, MongoDataSourceClient, openEmbeddedClient, WireServer } from '@tessera/datastore';
import { MemoryHistoryStorage } from '@tessera/sync-protocol';
import { makeTempDir } from '@tessera/testing';
import { DatastoreHistoryStorage } from './datastore-history-storage';
import { historyStorageContract } from './history-storage-contract.test';

describe('the in-memory history storage meets the history storage contract', () => {
  historyStorageContract({
    async open() {
      const storage = new MemoryHistoryStorage();
      return { storage, replica: async () => storage };
    },
  });
});

describe('the datastore history storage on the embedded engine meets the history storage contract', () => {
  const dir = makeTempDir('tessera-sync-history-embedded-');
  let client: DataSourceClient | undefined;
  const current = (): DataSourceClient => (client ??= openEmbeddedClient(dir.path));
  afterAll(async () => {
    await client?.close();
    dir.remove();
  });
  historyStorageContract({
    // One process holds an embedded store: a second replica in it shares the client, as the host's services do.
    async open() {
      const storage = new DatastoreHistoryStorage(current());
      return { storage, replica: async () => new DatastoreHistoryStorage(current()) };
    },
    async reopen() {
      await client?.close();
      client = undefined;
      return new DatastoreHistoryStorage(current());
    },
  });
});

describe('the datastore history storage on the MongoDB engine (official driver, datastore wire server) meets the history storage contract', () => {
  const dir = makeTempDir('tessera-sync-history-wire-');
  let server: WireServer | undefined;
  const clients: DataSourceClient[] = [];
  const connect = (): DataSourceClient => {
    const client = new MongoDataSourceClient(server!.uri());
    clients.push(client);
    return client;
  };
  beforeAll(async () => {
    server = await WireServer.start({ clustersDir: dir.path });
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await server?.close();
    dir.remove();
  });
  historyStorageContract({
    // Each replica is a driver client of its own: two processes sharing one deployment.
    async open() {
      return { storage: new DatastoreHistoryStorage(connect()), replica: async () => new DatastoreHistoryStorage(connect()) };
    },
    async reopen() {
      await Promise.all(clients.splice(0).map((client) => client.close()));
      await server?.close();
      server = await WireServer.start({ clustersDir: dir.path });
      return new DatastoreHistoryStorage(connect());
    },
  });
});
