/**
 * MongoDB's own database tools (mongodump, mongorestore, mongoimport, mongoexport), found through
 * TESSERA_MONGO_TOOLS: a directory holding their binaries. Debian has no package of them and the npm ones
 * download from MongoDB's servers, so they are built from mongodb/mongo-tools outside this repository;
 * without them the tests that need them are skipped with the reason.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DatastoreWireService } from '@tessera/server';
import { MongoClient } from 'mongodb';
import { startTestHost, type TestHost } from '../support/test-host';

const toolsDir = process.env['TESSERA_MONGO_TOOLS'];

export const mongoToolsSkipReason = !toolsDir
  ? "TESSERA_MONGO_TOOLS is not set: build MongoDB's database tools (mongodb/mongo-tools 100.8.0 with Go 1.19) and point it at their bin directory"
  : !existsSync(join(toolsDir, 'mongodump')) || !existsSync(join(toolsDir, 'mongorestore'))
    ? `TESSERA_MONGO_TOOLS=${toolsDir} holds no mongodump and mongorestore`
    : undefined;

export interface ToolRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `mongodump` into `mongorestore` through a pipe (`--archive` on both ends, as a live copy is made). */
export function pipeDumpToRestore(dumpArgs: string[], restoreArgs: string[], timeoutMs = 60_000): Promise<{ dump: ToolRun; restore: ToolRun }> {
  if (!toolsDir) throw new Error(mongoToolsSkipReason);
  const dump = spawn(join(toolsDir, 'mongodump'), dumpArgs, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
  const restore = spawn(join(toolsDir, 'mongorestore'), restoreArgs, { stdio: ['pipe', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
  dump.stdout.pipe(restore.stdin);
  const finished = (child: ReturnType<typeof spawn>): Promise<ToolRun> =>
    new Promise((resolve) => {
      let stdout = '';
      let stderr = '';
      if (child !== dump) child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
  return Promise.all([finished(dump), finished(restore)]).then(([d, r]) => ({ dump: d, restore: r }));
}

/** Runs one tool to its end (never rejects for a failing tool: the exit code is in the result). */
export function runTool(tool: 'mongodump' | 'mongorestore' | 'mongoimport' | 'mongoexport' | 'mongostat' | 'mongotop' | 'mongofiles' | 'bsondump', args: string[], timeoutMs = 60_000): Promise<ToolRun> {
  if (!toolsDir) throw new Error(mongoToolsSkipReason);
  return new Promise((resolve) => {
    // SIGKILL: a tool stuck connecting waits for its work to end on SIGTERM, which it never does.
    execFile(join(toolsDir, tool), args, { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** The datastore service alone, its wire server requiring SCRAM with `password`: the host, its URI and a connected client. */
export async function startWireDatastore(password: string): Promise<{ host: TestHost; uri: string; client: MongoClient }> {
  const host = await startTestHost({ services: ['datastore'], settings: { TESSERA_DATASTORE_PORT: '0', TESSERA_DATASTORE_PASSWORD: password } });
  const port = host.nest.get(DatastoreWireService).port ?? 0;
  const uri = `mongodb://tessera:${password}@127.0.0.1:${port}/?directConnection=true`;
  const client = new MongoClient(uri);
  await client.connect();
  return { host, uri, client };
}
