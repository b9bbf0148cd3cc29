// Replays the recorded uploads of every scenario through ServerHistory and checks that each recorded
// DOWNLOAD is what the history produces at that point: cursors, acknowledgements, downloadable_bytes,
// batching and the changeset bytes (including changesets the reference server transformed).
import { loadConformance, type RecordedEvent, type RecordedFrame } from '../conformance-frames.test';
import { decodeClientMessage, decodeServerMessage, encodeServerMessage, type UploadMessage } from '../wire/messages';
import { downloadMessage, ServerHistory } from './server-history';
import { MemoryHistoryStorage } from './storage';

const { frames, events } = loadConformance();

interface Session {
  ident: number;
  cursor: { serverVersion: number; clientVersion: number };
}

function partitionOf(file: string, fileFrames: RecordedFrame[]): string {
  const bind = fileFrames.find((f) => f.header.startsWith('bind'));
  const msg = bind ? decodeClientMessage(bind.bytes) : null;
  return msg?.type === 'bind' ? msg.path : file;
}

describe('replaying the recorded scenarios through the server history', () => {
  const storage = new MemoryHistoryStorage();
  const files = [...new Set(frames.map((f) => f.file))].sort();

  it.each(files)('produces every recorded DOWNLOAD of %s', async (file) => {
    const fileFrames = frames.filter((f) => f.file === file);
    const fileEvents: RecordedEvent[] = events.filter((e) => e.file === file);
    const partition = partitionOf(file, fileFrames);
    const maxBytes = file.startsWith('g-') ? 65_536 : undefined;
    let head = 0;
    let nextSalt = 0n;

    // A new server process opens the partition with a fresh salt; find it in the next DOWNLOAD that shows a new version.
    const openAt = async (seq: number): Promise<ServerHistory> => {
      head = await new ServerHistory(storage, partition).latestVersion();
      let salt = 1n;
      for (const f of fileFrames) {
        if (f.seq <= seq || !f.header.startsWith('download ')) continue;
        const fields = f.header.split(' ');
        if (Number(fields[4]) > head) {
          salt = BigInt(fields[5] ?? '1');
          break;
        }
      }
      return new ServerHistory(storage, partition, { versionSalt: salt, randomSalt: () => nextSalt });
    };
    let history = await openAt(0);
    const sessions = new Map<string, Session>();
    let downloads = 0;
    const pending: { ident: number; msg: UploadMessage; where: string }[] = [];
    const integrateNext = async (): Promise<void> => {
      const next = pending.shift();
      if (!next) return;
      const r = await history.integrateUpload(next.ident, next.msg.changesets, next.msg);
      expect(r, next.where).toMatchObject({ ok: true });
    };

    const timeline = [...fileFrames.map((f) => ({ seq: f.seq, frame: f })), ...fileEvents.map((e) => ({ seq: e.seq, event: e }))].sort((a, b) => a.seq - b.seq);
    for (const item of timeline) {
      if ('event' in item && item.event) {
        const raw = item.event.raw;
        if (item.event.event === 'close' && raw['by'] === 'server') history = await openAt(item.seq);
        continue;
      }
      const f = (item as { frame: RecordedFrame }).frame;
      if (f.dir === 'c2s') {
        const msg = decodeClientMessage(f.bytes);
        const key = `${f.conn}/${'sessionIdent' in msg ? msg.sessionIdent : 0}`;
        if (msg.type === 'ident') {
          const r = await history.bootstrapClient(msg);
          expect(r, `${file}#${f.seq}`).toMatchObject({ ok: true });
          sessions.set(key, { ident: msg.clientFileIdent, cursor: { serverVersion: msg.downloadServerVersion, clientVersion: msg.downloadClientVersion } });
        } else if (msg.type === 'upload') {
          const s = sessions.get(key);
          if (!s) throw new Error(`upload before ident at ${file}#${f.seq}`);
          // The server may answer an IDENT before integrating an upload pipelined behind it, so uploads
          // are integrated when a DOWNLOAD first shows their effect.
          pending.push({ ident: s.ident, msg, where: `${file}#${f.seq}` });
        }
        continue;
      }
      const msg = decodeServerMessage(f.bytes);
      const key = `${f.conn}/${'sessionIdent' in msg ? msg.sessionIdent : 0}`;
      if (msg.type === 'ident') {
        nextSalt = msg.clientFileIdentSalt;
        const registered = await history.registerClientFile();
        expect(registered).toEqual({ ident: msg.clientFileIdent, salt: msg.clientFileIdentSalt });
      } else if (msg.type === 'download') {
        const s = sessions.get(key);
        if (!s) throw new Error(`download before ident at ${file}#${f.seq}`);
        const { type: _t, sessionIdent: _s, wireBody: _w, changesets: recorded, ...header } = msg;
        for (;;) {
          const client = await storage.getClientFile(partition, s.ident);
          const behind = (await history.latestVersion()) < header.latestServerVersion || (client?.lastIntegratedClientVersion ?? 0) < header.uploadClientVersion;
          if (!behind || pending.length === 0) break;
          await integrateNext();
        }
        const batch = await history.download(s.ident, s.cursor, maxBytes);
        const { changesets: mine, ...myHeader } = batch;
        expect(myHeader, `${file}#${f.seq}`).toEqual(header);
        expect(mine.length, `${file}#${f.seq}`).toBe(recorded.length);
        mine.forEach((c, i) => {
          const r = recorded[i];
          expect({ ...c, changeset: Buffer.from(c.changeset).toString('hex') }, `${file}#${f.seq} changeset ${i}`).toEqual({ ...r, changeset: Buffer.from(r?.changeset ?? []).toString('hex') });
        });
        // Uncompressed DOWNLOAD frames come out byte for byte (the reference server's zlib output differs from ours).
        const again = encodeServerMessage(downloadMessage(msg.sessionIdent, batch));
        if (!msg.wireBody?.compressed) expect(Buffer.from(again).equals(Buffer.from(f.bytes)), `${file}#${f.seq}`).toBe(true);
        s.cursor = { serverVersion: batch.downloadServerVersion, clientVersion: batch.downloadClientVersion };
        downloads++;
      }
    }
    while (pending.length > 0) await integrateNext();
    expect(downloads).toBeGreaterThan(0);
  });
});
