import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDataSourceClient, embeddedClusterDir } from './client';

describe('cluster mapping', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'tessera-clusters-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('gives an unmapped cluster name an embedded database in the data directory', async () => {
    const client = createDataSourceClient({ clusterName: 'Cluster0', serviceName: 'mongodb-atlas', dataDir, clusterUris: { Other: 'mongodb://example.invalid' } });
    expect(client.engine).toBe('embedded');
    await client.db('app').collection('c').insertOne({ _id: 1 });
    expect(existsSync(embeddedClusterDir(dataDir, 'Cluster0'))).toBe(true);
    await client.close();
  });

  it('shares one store between clients of the same cluster', async () => {
    const a = createDataSourceClient({ clusterName: 'Cluster0', dataDir });
    const b = createDataSourceClient({ clusterName: 'Cluster0', dataDir });
    await a.db('app').collection('c').insertOne({ _id: 1 });
    expect(await b.db('app').collection('c').findOne({ _id: 1 })).toEqual({ _id: 1 });
    await a.close();
    expect(await b.db('app').collection('c').countDocuments({})).toBe(1);
    await b.close();
  });

  it('uses MongoDB for a cluster name mapped to a URI (without connecting until used)', async () => {
    const client = createDataSourceClient({ clusterName: 'Cluster0', dataDir, clusterUris: { Cluster0: 'mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=100' }, readPreference: 'secondaryPreferred' });
    expect(client.engine).toBe('mongodb');
    await expect(client.db('app').collection('c').findOne({})).rejects.toMatchObject({ errorCode: 'MongoDBError' });
    await client.close();
  });

  it('refuses cluster names that would leave the data directory', () => {
    expect(() => createDataSourceClient({ clusterName: '../etc', dataDir })).toThrow(/Invalid cluster name/);
  });
});
