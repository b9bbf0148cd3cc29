import { MongoDataSourceClient } from '../mongodb/mongodb-client';
import { dataSourceContract } from './data-source-contract.test';

// Needs a MongoDB deployment: none runs here, so this suite is skipped unless MONGODB_URI points at one
// (transactions additionally need a replica set: MONGODB_REPLICA_SET=1).
const uri = process.env.MONGODB_URI;

describe.skipIf(!uri)('the MongoDB engine meets the data-source contract (skipped: MONGODB_URI is not set)', () => {
  let n = 0;
  dataSourceContract({
    async open() {
      return new MongoDataSourceClient(uri as string);
    },
    dbName: () => `tessera_contract_${process.pid}_${++n}`,
    supportsTransactions: process.env.MONGODB_REPLICA_SET === '1',
  });
});
