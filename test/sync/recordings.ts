import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repositoryRoot, sharedMaterial } from '@tessera/testing';

export interface RecordedFrame {
  seq: number;
  dir: 'c2s' | 's2c';
  conn: number;
  header: string;
  bytes: Uint8Array;
}

/** The frames of one recorded scenario of /work/shared/conformance/sync (event lines dropped). */
export function recordedFrames(file: string): RecordedFrame[] {
  const text = readFileSync(join(conformanceDir(), file), 'utf8');
  const frames: RecordedFrame[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const entry = JSON.parse(line) as { seq: number; dir?: 'c2s' | 's2c'; conn?: number; header?: string; body_b64?: string; event?: string };
    if (entry.event !== undefined || !entry.dir || entry.header === undefined || entry.conn === undefined) continue;
    const body = Buffer.from(entry.body_b64 ?? '', 'base64');
    frames.push({ seq: entry.seq, dir: entry.dir, conn: entry.conn, header: entry.header, bytes: new Uint8Array(Buffer.concat([Buffer.from(`${entry.header}\n`), body])) });
  }
  return frames;
}

/** The recordings live outside the repository in this workspace; TESSERA_SYNC_CONFORMANCE_DIR moves them. */
export function conformanceDir(): string {
  return process.env['TESSERA_SYNC_CONFORMANCE_DIR'] ?? sharedMaterial('conformance/sync') ?? join(repositoryRoot, '..', 'shared', 'conformance', 'sync');
}
