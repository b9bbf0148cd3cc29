import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { dec, decodesOrRefuses, enc, expectProtocolError } from '../protocol-error.test';
import { loadConformance } from '../conformance-frames.test';
import { encodeUploadBody } from './body';
import {
  decodeClientMessage,
  decodeServerMessage,
  encodeClientMessage,
  encodeServerMessage,
  jsonErrorMessage,
  type DownloadMessage,
  type ServerJsonErrorMessage,
  type UploadMessage,
} from './messages';


describe('wire codec vectors from realm-core', () => {
  it('round-trips the client IDENT vector', () => {
    const bytes = enc('ident 234888 999123 123999 3 4 1 2\n');
    const msg = decodeClientMessage(bytes);
    expect(msg).toEqual({
      type: 'ident',
      sessionIdent: 234888,
      clientFileIdent: 999123,
      clientFileIdentSalt: 123999n,
      downloadServerVersion: 3,
      downloadClientVersion: 4,
      latestServerVersion: 1,
      latestServerVersionSalt: 2n,
    });
    expect(dec(encodeClientMessage(msg))).toBe('ident 234888 999123 123999 3 4 1 2\n');
  });

  it('round-trips the UPLOAD vector with two changesets', () => {
    const text =
      'upload 999123 0 122 0 30 17 10\n29 18 259604001718 888123 32 AABBCCDDEEFFGGHHIIJJKKLLMMNNOOPP30 19 259604001850 888234 32 EEFFGGHHIIJJKKLLMMNNOOPPQQRRSSTT';
    const msg = decodeClientMessage(enc(text)) as UploadMessage;
    expect(msg.progressClientVersion).toBe(30);
    expect(msg.progressServerVersion).toBe(17);
    expect(msg.lockedServerVersion).toBe(10);
    expect(msg.changesets.map((c) => [c.clientVersion, c.lastIntegratedServerVersion, c.originTimestamp, c.originFileIdent, dec(c.changeset)])).toEqual([
      [29, 18, 259604001718, 888123, 'AABBCCDDEEFFGGHHIIJJKKLLMMNNOOPP'],
      [30, 19, 259604001850, 888234, 'EEFFGGHHIIJJKKLLMMNNOOPPQQRRSSTT'],
    ]);
    const { wireBody: _dropped, ...fresh } = msg;
    expect(dec(encodeClientMessage(fresh))).toBe(text);
  });

  it('round-trips MARK, PING, UNBIND and BIND vectors', () => {
    for (const text of ['mark 234888 888234\n', 'ping 1234567890 23\n', 'unbind 234888\n', 'bind 888234 0 5 1 0\ntoken']) {
      expect(dec(encodeClientMessage(decodeClientMessage(enc(text))))).toBe(text);
    }
    expect(decodeClientMessage(enc('bind 888234 0 5 1 0\ntoken'))).toMatchObject({ path: '', token: 'token', needClientFileIdent: true });
  });

  it('round-trips every server message', () => {
    const texts = [
      'ident 1 2 8375000503961609407\n',
      'download 1 0 0 0 0 0 0 0 0 0 0\n',
      'mark 1 2\n',
      'unbound 1\n',
      'pong 1234567890\n',
      'error 212 7 0 1\nbad cs!',
      'log_message 0 27\n{"level":"info","msg":"hi"}',
    ];
    for (const text of texts) expect(dec(encodeServerMessage(decodeServerMessage(enc(text))))).toBe(text);
  });
});

describe('JSON_ERROR', () => {
  const msg: ServerJsonErrorMessage = {
    type: 'json_error',
    code: 212,
    sessionIdent: 3,
    body: { tryAgain: false, message: 'bad changeset', isRecoveryModeDisabled: false, logURL: '', shouldClientReset: true, action: 'ClientReset' },
  };

  it('encodes a body with all six fields the client requires and decodes it back', () => {
    const bytes = encodeServerMessage(msg);
    expect(dec(bytes).split('\n')[0]).toMatch(/^json_error 212 \d+ 3$/);
    expect(decodeServerMessage(bytes)).toEqual(msg);
  });

  it('builds a complete body from an action', () => {
    const reset = jsonErrorMessage(211, 1, { message: 'diverging histories', action: 'ClientReset' });
    expect(reset.body).toEqual({ tryAgain: false, message: 'diverging histories', isRecoveryModeDisabled: false, logURL: '', shouldClientReset: true, action: 'ClientReset' });
    expect(decodeServerMessage(encodeServerMessage(reset))).toEqual(reset);
    expect(jsonErrorMessage(201, 1, { message: 'busy', action: 'Transient' }).body).toMatchObject({ tryAgain: true, shouldClientReset: false });
  });

  it('refuses at compile time and at run time a code that aborts clients', () => {
    // @ts-expect-error 104 (limits_exceeded) terminates realm-core clients
    const bad: ServerJsonErrorMessage = { ...msg, code: 104 };
    expectProtocolError(() => encodeServerMessage(bad), /never be sent/);
    expectProtocolError(() => decodeServerMessage(enc('error 224 1 0 1\nx')), /must never be sent/);
  });

  it('requires the backoff fields together at compile time', () => {
    // @ts-expect-error backoffIntervalSec without backoffMaxDelaySec and backoffMultiplier
    const partial: ServerJsonErrorMessage['body'] = { ...msg.body, backoffIntervalSec: 3 };
    expect(partial.backoffIntervalSec).toBe(3);
  });

  it('rejects a received body missing a required field', () => {
    const body = JSON.stringify({ tryAgain: false, message: 'x', logURL: '', shouldClientReset: true, action: 'ClientReset' });
    expectProtocolError(() => decodeServerMessage(enc(`json_error 212 ${body.length} 3\n${body}`)), /isRecoveryModeDisabled/);
  });

  it('carries the client json_error body verbatim', () => {
    const text = 'json_error 212 25 1\n{"message":"bad changes"}';
    expect(dec(encodeClientMessage(decodeClientMessage(enc(text))))).toBe(text);
  });
});

describe('malformed frames', () => {
  const cases: [string, string | Uint8Array, RegExp][] = [
    ['a missing newline', 'mark 1 2', /newline/],
    ['an unknown message', 'transact 1\n', /unknown client message/],
    ['too few fields', 'mark 1\n', /fields/],
    ['too many fields', 'mark 1 2 3\n', /fields/],
    ['a trailing space', 'ping 1 \n', /canonical/],
    ['a double space', 'mark 1  2\n', /fields/],
    ['a leading zero', 'mark 01 2\n', /canonical/],
    ['a sign', 'mark +1 2\n', /canonical/],
    ['a negative number', 'mark -1 2\n', /canonical/],
    ['a boolean of 2', 'bind 1 0 0 2 0\n', /0 or 1/],
    ['a salt of 2^63', 'ident 1 2 9223372036854775808 0 0 0 0\n', /range/],
    ['a huge version', 'mark 1 99999999999999999\n', /range/],
    ['leftover bytes', 'unbind 1\nx', /leftover/],
    ['a truncated body', 'bind 1 4 0 1 0\n"p1', /truncated/],
    ['an oversized body', 'bind 1 999999999 0 1 0\n', /exceeds/],
    ['a body longer than declared', 'bind 1 2 0 1 0\n"p1"', /leftover/],
    ['a compressed size on an uncompressed body', 'upload 1 0 0 5 1 0 0\n', /compressed size/],
    ['a bad body number', 'upload 1 0 6 0 1 0 0\n1 x 1 ', /bad character/],
    ['a changeset running past the body', 'upload 1 0 11 0 1 0 0\n1 0 0 0 99 ', /past the end/],
    ['a body ending inside a number', 'upload 1 0 3 0 1 0 0\n1 0', /ended inside/],
    ['a non-printable header byte', new Uint8Array([0x6d, 0x00, 0x0a]), /non-printable/],
    ['a bad UTF-8 path', new Uint8Array([...enc('bind 1 1 0 1 0\n'), 0xff]), /UTF-8/],
  ];
  it.each(cases)('rejects %s', (_name, input, pattern) => {
    expectProtocolError(() => decodeClientMessage(typeof input === 'string' ? enc(input) : input), pattern);
  });

  it('rejects compressed bodies whose declared sizes lie', () => {
    const body = encodeUploadBody([{ clientVersion: 5, lastIntegratedServerVersion: 1, originTimestamp: 1, originFileIdent: 0, changeset: new Uint8Array(2000) }]);
    const z = deflateSync(body, { level: 1 });
    const header = (u: number, c: number): Uint8Array => enc(`upload 1 1 ${u} ${c} 5 1 0\n`);
    const good = new Uint8Array([...header(body.length, z.length), ...z]);
    expect((decodeClientMessage(good) as UploadMessage).changesets).toHaveLength(1);
    expectProtocolError(() => decodeClientMessage(new Uint8Array([...header(body.length - 1, z.length), ...z])), /inflated|inflate/);
    expectProtocolError(() => decodeClientMessage(new Uint8Array([...header(body.length + 1, z.length), ...z])), /inflated/);
    expectProtocolError(() => decodeClientMessage(new Uint8Array([...header(body.length, z.length + 1), ...z])), /truncated/);
    expectProtocolError(() => decodeClientMessage(new Uint8Array([...header(body.length, z.length), ...z.subarray(0, 20), 1, ...z.subarray(21)])), /inflate/);
    expectProtocolError(() => decodeClientMessage(new Uint8Array([...header(body.length, z.length + 2), ...z, 0, 0])), /trailing/);
  });
});

describe('recorded realm-js traffic', () => {
  const { frames } = loadConformance();

  it('has frames in both directions', () => {
    expect(frames.filter((f) => f.dir === 'c2s').length).toBeGreaterThan(100);
    expect(frames.filter((f) => f.dir === 's2c').length).toBeGreaterThan(100);
  });

  it('decodes every frame and re-encodes it byte-identically', () => {
    for (const f of frames) {
      const again = f.dir === 'c2s' ? encodeClientMessage(decodeClientMessage(f.bytes)) : encodeServerMessage(decodeServerMessage(f.bytes));
      expect(Buffer.from(again).equals(Buffer.from(f.bytes)), `${f.file} seq ${f.seq}`).toBe(true);
    }
  });

  it('rebuilds every upload frame byte-identically from its parsed changesets, compression included', () => {
    let compressed = 0;
    for (const f of frames.filter((x) => x.header.startsWith('upload'))) {
      const msg = decodeClientMessage(f.bytes) as UploadMessage;
      if (msg.wireBody?.compressed) compressed++;
      const { wireBody: _w, ...fresh } = msg;
      expect(Buffer.from(encodeClientMessage(fresh)).equals(Buffer.from(f.bytes)), `${f.file} seq ${f.seq}`).toBe(true);
    }
    expect(compressed).toBeGreaterThanOrEqual(5);
  });

  it('rebuilds every download from its parsed changesets into an equivalent frame', () => {
    for (const f of frames.filter((x) => x.header.startsWith('download'))) {
      const msg = decodeServerMessage(f.bytes) as DownloadMessage;
      const { wireBody: _w, ...fresh } = msg;
      const again = decodeServerMessage(encodeServerMessage(fresh)) as DownloadMessage;
      const { wireBody: _w2, changesets, ...header } = again;
      const { changesets: _c, ...freshHeader } = fresh;
      expect(header).toEqual(freshHeader);
      expect(changesets.length).toBe(msg.changesets.length);
      changesets.forEach((c, i) => {
        const orig = msg.changesets[i];
        expect(orig && Buffer.from(c.changeset).equals(Buffer.from(orig.changeset))).toBe(true);
        expect({ ...c, changeset: null }).toEqual({ ...orig, changeset: null });
      });
    }
  });

  it('rejects every frame cut short or extended, and never throws anything but SyncProtocolError on mutations', () => {
    const small = frames.filter((f) => f.bytes.length < 4000);
    for (const f of small.slice(0, 60)) {
      const decode = f.dir === 'c2s' ? decodeClientMessage : decodeServerMessage;
      if (f.bytes.length > f.header.length + 1) expectProtocolError(() => decode(f.bytes.subarray(0, f.bytes.length - 1)));
      expectProtocolError(() => decode(new Uint8Array([...f.bytes, 0x41])));
    }
    fc.assert(
      fc.property(fc.integer({ min: 0, max: small.length - 1 }), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }), (i, edits) => {
        const f = small[i];
        if (!f) return;
        const bytes = f.bytes.slice();
        for (const [at, v] of edits) bytes[at % bytes.length] = v;
        decodesOrRefuses(bytes, [decodeClientMessage, decodeServerMessage]);
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws anything but SyncProtocolError on random bytes', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.string().map(enc)), (bytes) => {
        decodesOrRefuses(bytes, [decodeClientMessage, decodeServerMessage]);
      }),
      { numRuns: 2000 },
    );
  });
});
