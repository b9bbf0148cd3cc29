/** The engines the conformance runner can target: a fresh embedded store per case, or MongoDB. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DataSourceClient, MongoDataSourceClient, openEmbeddedClient, WireServer } from '@tessera/datastore';
import { type ConformanceTarget } from './unified-runner';

/** The embedded engine behaves as a single MongoDB 7.0 server. */
export function embeddedTarget(): ConformanceTarget {
  const dirs = new Map<DataSourceClient, string>();
  return {
    name: 'embedded',
    serverVersion: '7.0.0',
    topology: 'single',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'tessera-conformance-'));
      const client = openEmbeddedClient(dir);
      dirs.set(client, dir);
      return client;
    },
    async dispose(client) {
      await client.close();
      const dir = dirs.get(client);
      dirs.delete(client);
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * MongoDB at `uri`, reached by the official driver: the cases' operations run through it with command
 * monitoring (so their events are checked); seeding and `outcome` use the data-access API's client.
 */
export function mongodbTarget(uri: string, serverVersion: string, topology: ConformanceTarget['topology']): ConformanceTarget {
  return {
    name: 'mongodb',
    serverVersion,
    topology,
    driverUri: uri,
    async open() {
      return new MongoDataSourceClient(uri);
    },
    async dispose(client) {
      await client.close();
    },
  };
}

/**
 * The official driver against Tessera's datastore wire server, started in this process over a
 * fresh data directory; `close()` stops it. It answers as a one-member replica set of MongoDB 7.0.
 */
export async function wireTarget(): Promise<ConformanceTarget & { close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-conformance-wire-'));
  const server = await WireServer.start({ clustersDir: dir });
  return {
    // Reached as a replica set (discovered from its seed), as a spec runner reaches one, not by a direct
    // connection: over one the driver treats the server as a standalone and adds a $readPreference.
    ...mongodbTarget(`mongodb://127.0.0.1:${server.port}/?replicaSet=${server.replicaSetName}`, '7.0.0', 'replicaset'),
    name: 'wire',
    noSecondary: true,
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
