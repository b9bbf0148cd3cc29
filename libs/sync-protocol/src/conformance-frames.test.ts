// Test helper (not a spec, not built): loads the recorded realm-js <-> reference-server frames.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const CONFORMANCE_DIR = '/work/shared/conformance/sync';

export interface RecordedFrame {
  file: string;
  seq: number;
  dir: 'c2s' | 's2c';
  conn: number;
  header: string;
  bytes: Uint8Array;
}

export interface RecordedEvent {
  file: string;
  seq: number;
  event: string;
  raw: Record<string, unknown>;
}

export function loadConformance(): { frames: RecordedFrame[]; events: RecordedEvent[] } {
  const frames: RecordedFrame[] = [];
  const events: RecordedEvent[] = [];
  for (const file of readdirSync(CONFORMANCE_DIR).filter((f) => f.endsWith('.jsonl')).sort()) {
    for (const line of readFileSync(join(CONFORMANCE_DIR, file), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const raw = JSON.parse(line) as Record<string, unknown>;
      if (typeof raw['event'] === 'string') {
        events.push({ file, seq: raw['seq'] as number, event: raw['event'], raw });
        continue;
      }
      const header = raw['header'] as string;
      const body = Buffer.from(raw['body_b64'] as string, 'base64');
      const bytes = new Uint8Array(Buffer.concat([Buffer.from(header + '\n', 'latin1'), body]));
      frames.push({ file, seq: raw['seq'] as number, dir: raw['dir'] as 'c2s' | 's2c', conn: raw['conn'] as number, header, bytes });
    }
  }
  return { frames, events };
}
