import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoDataSourceClient } from '../mongodb/mongodb-client';
import { WireServer } from '../wire/wire-server';
import { dataSourceContract } from './data-source-contract.test';

// The MongoDB engine (the official driver behind MongoDataSourceClient) against a MongoDB deployment: the
// one MONGODB_URI names (transactions need a replica set there: MONGODB_REPLICA_SET=1), else Tessera's own
// datastore wire server over a fresh embedded store, started in this process on a random port.
const externalUri = process.env.MONGODB_URI;

describe(`the MongoDB engine meets the data-source contract (${externalUri ? 'MONGODB_URI' : 'through the datastore wire server'})`, () => {
  let server: WireServer | undefined;
  let dir: string | undefined;
  let uri = externalUri ?? '';
  let n = 0;
  beforeAll(async () => {
    if (externalUri) return;
    dir = mkdtempSync(join(tmpdir(), 'tessera-wire-contract-'));
    server = await WireServer.start({ clustersDir: dir });
    uri = server.uri();
  });
  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  dataSourceContract({
    async open() {
      return new MongoDataSourceClient(uri);
    },
    dbName: () => `tessera_contract_${process.pid}_${++n}`,
    supportsTransactions: externalUri ? process.env.MONGODB_REPLICA_SET === '1' : true,
  });
});
