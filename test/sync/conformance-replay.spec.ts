import { decodeClientMessage, decodeServerMessage, encodeClientMessage, parseChangeset, type ServerMessage } from '@tessera/sync-protocol';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '@tessera/testing';
import { conformanceDir, recordedFrames } from './recordings';
import { partitionSync, type SyncHost, startSyncHost } from './sync-host';
import { connect, type SyncTestClient, syncUrl } from './sync-test-client';

// Replays the client side of recorded realm-js traffic (realm-core's reference server on the other end)
// against our server, and compares every server message with the recorded one structurally: the same
// messages in the same order with the same versions, cursors and changesets. Salts and client file idents
// are random per server, so they are compared through a consistent mapping instead of by value.

/** Recorded value -> ours, for salts and client file idents; a value must always map to the same one. */
class Correspondence {
  private readonly map = new Map<string, string>();

  constructor(readonly what: string) {}

  match(recorded: bigint | number, ours: bigint | number): void {
    const key = recorded.toString();
    const known = this.map.get(key);
    if (known === undefined) this.map.set(key, ours.toString());
    else expect(ours.toString(), `${this.what} ${key}`).toBe(known);
  }

  ours(recorded: bigint): bigint;
  ours(recorded: number): number;
  ours(recorded: bigint | number): bigint | number {
    if (recorded === 0 || recorded === 0n) return recorded;
    const mapped = this.map.get(recorded.toString());
    if (mapped === undefined) throw new Error(`${this.what} ${recorded} was never sent by our server`);
    return typeof recorded === 'bigint' ? BigInt(mapped) : Number(mapped);
  }
}

function compare(ours: ServerMessage, recorded: ServerMessage, idents: Correspondence, salts: Correspondence): void {
  expect(ours.type).toBe(recorded.type);
  if (ours.type === 'ident' && recorded.type === 'ident') {
    expect(ours.sessionIdent).toBe(recorded.sessionIdent);
    idents.match(recorded.clientFileIdent, ours.clientFileIdent);
    salts.match(recorded.clientFileIdentSalt, ours.clientFileIdentSalt);
    return;
  }
  if (ours.type === 'download' && recorded.type === 'download') {
    const { changesets: ourChangesets, latestServerVersionSalt: ourSalt, wireBody: _ours, ...ourHeader } = ours;
    const { changesets: recordedChangesets, latestServerVersionSalt: recordedSalt, wireBody: _recorded, ...recordedHeader } = recorded;
    expect(ourHeader).toEqual(recordedHeader);
    salts.match(recordedSalt, ourSalt);
    expect(ourChangesets).toHaveLength(recordedChangesets.length);
    ourChangesets.forEach((changeset, i) => {
      const expected = recordedChangesets[i];
      if (!expected) throw new Error(`no recorded changeset ${i}`);
      expect({ ...changeset, changeset: undefined, originFileIdent: undefined }).toEqual({ ...expected, changeset: undefined, originFileIdent: undefined });
      idents.match(expected.originFileIdent, changeset.originFileIdent);
      expect(parseChangeset(changeset.changeset).instructions).toEqual(parseChangeset(expected.changeset).instructions);
    });
    return;
  }
  expect(ours).toEqual(recorded);
}

/** Where the recorded server was stopped: the seq of each `step` line announcing it. */
function serverStops(file: string): number[] {
  return readFileSync(join(conformanceDir(), file), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as { seq: number; event?: string; text?: string })
    .filter((line) => line.event === 'step' && line.text?.startsWith('reference server stopping'))
    .map((line) => line.seq);
}

/**
 * Waits until the server has handled every frame a client sent before: a connection's messages are handled
 * in order, so its PONG comes after them. The recorded server had handled them when it was stopped.
 */
async function settled(client: SyncTestClient): Promise<void> {
  const timestamp = Date.now();
  client.send({ type: 'ping', timestamp, rtt: 0 });
  expect(await client.next()).toEqual({ type: 'pong', timestamp });
}

/**
 * Replays the client frames of each file in turn (one client per recorded connection). Where the recording
 * stopped the reference server, the host restarts on the same data directory: the recorded connections
 * end, and the client's next connection resumes from what it persisted.
 */
async function replay(host: SyncHost, clientAppId: string, files: string[]): Promise<number> {
  const idents = new Correspondence('client file ident');
  const salts = new Correspondence('salt');
  let compared = 0;
  for (const file of files) {
    const clients = new Map<number, SyncTestClient>();
    const frames = recordedFrames(file);
    const stops = serverStops(file);
    for (const frame of frames) {
      if (stops[0] !== undefined && frame.seq > stops[0]) {
        stops.shift();
        for (const live of clients.values()) {
          await settled(live);
          expect(live.unread(), `${file}: messages the reference server did not send before it stopped`).toEqual([]);
        }
        await host.restart();
        for (const live of clients.values()) {
          await eventually(() => expect(live.closed).toBe(true));
          live.close();
        }
        clients.clear();
      }
      let client = clients.get(frame.conn);
      if (!client) {
        client = await connect(syncUrl(host.url, clientAppId, (await host.login(clientAppId)).access));
        clients.set(frame.conn, client);
      }
      if (frame.dir === 's2c') {
        const recorded = decodeServerMessage(frame.bytes);
        if (recorded.type === 'log_message') continue;
        const ours = await client.next();
        try {
          compare(ours, recorded, idents, salts);
        } catch (error) {
          throw new Error(`${file} seq ${frame.seq} (${frame.header}): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        }
        compared++;
        continue;
      }
      const message = decodeClientMessage(frame.bytes);
      if (message.type === 'ident') {
        // The client's IDENT repeats what the server told it: ours, not the reference server's.
        client.send({
          ...message,
          clientFileIdent: idents.ours(message.clientFileIdent),
          clientFileIdentSalt: salts.ours(message.clientFileIdentSalt),
          latestServerVersionSalt: salts.ours(message.latestServerVersionSalt),
        });
      } else {
        client.sendRaw(frame.bytes);
      }
      expect(encodeClientMessage(message).length).toBeGreaterThan(0);
    }
    for (const client of clients.values()) {
      expect(client.unread(), `${file}: messages the reference server did not send`).toEqual([]);
      client.close();
    }
  }
  return compared;
}

// The recordings are shared workspace material outside the repository; without them there is nothing to replay.
describe.skipIf(!existsSync(conformanceDir()))('sync service: replay of recorded realm-js traffic (skipped when the recordings are absent)', () => {
  let host: SyncHost;

  beforeAll(async () => {
    host = await startSyncHost();
  });

  afterAll(async () => {
    await host?.close();
  });

  it('answers a first open, its uploads and a second client download as the reference server did (recordings a, b)', async () => {
    const clientAppId = await host.createApp('replay-ab', (app) => partitionSync(app, { read: true, write: true }));
    expect(await replay(host, clientAppId, ['a-first-open-and-create.jsonl', 'b-second-client-download.jsonl'])).toBeGreaterThan(10);
  });

  it.each(['c-property-updates.jsonl', 'd-concurrent-edits-merge.jsonl', 'g-large-batch.jsonl'])('replays %s', async (file) => {
    const clientAppId = await host.createApp(`replay-${file.slice(0, 1)}`, (app) => partitionSync(app, { read: true, write: true }));
    const files = file.startsWith('c') ? ['a-first-open-and-create.jsonl', 'b-second-client-download.jsonl', file] : [file];
    expect(await replay(host, clientAppId, files)).toBeGreaterThan(10);
  });

  it('resumes a client across a restart of the host on the same data, as the reference server did (recording e)', async () => {
    const clientAppId = await host.createApp('replay-e', (app) => partitionSync(app, { read: true, write: true }));
    expect(serverStops('e-server-restart-resume.jsonl')).toHaveLength(1);
    expect(await replay(host, clientAppId, ['e-server-restart-resume.jsonl'])).toBeGreaterThan(8);
  });

  it('replays f-int-partition.jsonl', async () => {
    const clientAppId = await host.createApp('replay-f', (app) => partitionSync(app, { read: true, write: true }, 'long'));
    expect(await replay(host, clientAppId, ['f-int-partition.jsonl'])).toBeGreaterThan(10);
  });
});
