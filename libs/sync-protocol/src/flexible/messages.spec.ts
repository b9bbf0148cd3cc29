import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { dec, decodesOrRefuses, enc, expectProtocolError } from '../protocol-error.test';
import { encodeDownloadBody } from '../wire/body';
import {
  decodeFlexibleClientMessage,
  decodeFlexibleServerMessage,
  encodeFlexibleClientMessage,
  encodeFlexibleServerMessage,
  formatQueryBody,
  type FlexibleDownloadMessage,
  type FlexibleIdentMessage,
  type FlexibleServerMessage,
  type QueryMessage,
} from './messages';
import { compensatingWriteMessage, permissionsChangedMessage, queryErrorMessage } from './errors';
import { parseRejectedUpdates } from './compensating-writes';


describe('flexible BIND', () => {
  it('reads the JSON body realm-core v14 sends and writes it back byte for byte', () => {
    const text = 'bind 1 37 0 1 0\n{"schemaVersion":0,"sessionReason":0}';
    const msg = decodeFlexibleClientMessage(enc(text));
    expect(msg).toEqual({ type: 'bind', sessionIdent: 1, data: { schemaVersion: 0, sessionReason: 0 }, token: '', needClientFileIdent: true, isSubserver: false });
    expect(dec(encodeFlexibleClientMessage(msg))).toBe(text);
  });

  it('writes members in key order, as realm-core JSON does, whatever order they were given in', () => {
    const bytes = encodeFlexibleClientMessage({
      type: 'bind',
      sessionIdent: 4,
      data: { sessionReason: 1, schemaVersion: 3, migratedPartition: '"p1"' },
      token: '',
      needClientFileIdent: false,
      isSubserver: false,
    });
    expect(dec(bytes)).toBe('bind 4 66 0 0 0\n{"migratedPartition":"\\"p1\\"","schemaVersion":3,"sessionReason":1}');
  });

  it('accepts an empty JSON body (protocol 8 clients with nothing to say) and keeps unknown members', () => {
    expect(decodeFlexibleClientMessage(enc('bind 2 0 0 1 0\n'))).toMatchObject({ type: 'bind', data: {} });
    expect(decodeFlexibleClientMessage(enc('bind 2 12 0 1 0\n{"future":1}'))).toMatchObject({ data: { future: 1 } });
  });

  it.each([
    ['a path instead of JSON', 'bind 1 4 0 1 0\n"p1"', /not a JSON object/],
    ['a sessionReason of 2', 'bind 1 19 0 1 0\n{"sessionReason":2}', /sessionReason/],
    ['a negative schemaVersion', 'bind 1 20 0 1 0\n{"schemaVersion":-1}', /schemaVersion/],
    ['a numeric migratedPartition', 'bind 1 23 0 1 0\n{"migratedPartition":1}', /migratedPartition/],
    ['a truncated body', 'bind 1 37 0 1 0\n{"schemaVersion":0}', /truncated/],
  ])('refuses %s', (_name, text, pattern) => {
    expectProtocolError(() => decodeFlexibleClientMessage(enc(text)), pattern);
  });
});

describe('flexible IDENT and QUERY', () => {
  it('reads the query version and the query body after the partition fields', () => {
    const text = 'ident 2 7 123456 5 3 5 987 1 32\n{"Item":"(owner_id == \\"abc\\")"}';
    const msg = decodeFlexibleClientMessage(enc(text)) as FlexibleIdentMessage;
    expect(msg).toMatchObject({
      type: 'ident',
      sessionIdent: 2,
      clientFileIdent: 7,
      clientFileIdentSalt: 123456n,
      downloadServerVersion: 5,
      downloadClientVersion: 3,
      latestServerVersion: 5,
      latestServerVersionSalt: 987n,
      queryVersion: 1,
      queries: { Item: '(owner_id == "abc")' },
    });
    expect(dec(encodeFlexibleClientMessage(msg))).toBe(text);
  });

  it('sends the empty subscription set as version 0 with {}', () => {
    const fresh: FlexibleIdentMessage = {
      type: 'ident',
      sessionIdent: 1,
      clientFileIdent: 3,
      clientFileIdentSalt: 42n,
      downloadServerVersion: 0,
      downloadClientVersion: 0,
      latestServerVersion: 0,
      latestServerVersionSalt: 0n,
      queryVersion: 0,
      queries: {},
    };
    expect(dec(encodeFlexibleClientMessage(fresh))).toBe('ident 1 3 42 0 0 0 0 0 2\n{}');
  });

  it('round-trips QUERY, writing types in key order', () => {
    const msg: QueryMessage = { type: 'query', sessionIdent: 2, queryVersion: 2, queries: { Person: '(TRUEPREDICATE)', Item: '(done == false) OR (owner_id == "abc")' } };
    const text = 'query 2 2 78\n{"Item":"(done == false) OR (owner_id == \\"abc\\")","Person":"(TRUEPREDICATE)"}';
    expect(dec(encodeFlexibleClientMessage(msg))).toBe(text);
    const back = decodeFlexibleClientMessage(enc(text)) as QueryMessage;
    expect(back.queries).toEqual(msg.queries);
    expect(back.queryBody).toBe(formatQueryBody(msg.queries));
  });

  it('orders types by their UTF-8 bytes, as realm-core does (not by UTF-16 code units)', () => {
    // In UTF-16 code units U+1F600 (a surrogate pair, 0xD83D...) sorts first; in UTF-8 bytes U+FF21 (EF BC A1) does.
    const body = formatQueryBody({ '\u{1F600}': 'a', '\uFF21': 'b' });
    expect(body).toBe('{"\uFF21":"b","\u{1F600}":"a"}');
  });

  it('keeps a received body verbatim so that the server can compare and store what the client sent', () => {
    const text = 'query 3 4 34\n{ "B": "(a > 1)", "A": "(b < 2)" }';
    expect(dec(encodeFlexibleClientMessage(decodeFlexibleClientMessage(enc(text))))).toBe(text);
  });

  it.each([
    ['a PBS IDENT (no query fields)', 'ident 1 2 3 0 0 0 0\n', /fields/],
    ['a query body that is an array', 'query 1 1 2\n[]', /not a JSON object/],
    ['a query that is not a string', 'query 1 1 10\n{"Item":1}', /not a string/],
    ['an empty type name', 'query 1 1 8\n{"":"a"}', /empty/],
    ['a body that is not JSON', 'query 1 1 3\n{x}', /not JSON/],
    ['a negative query version', 'query 1 -1 2\n{}', /canonical/],
    ['a body longer than declared', 'query 1 1 1\n{}', /leftover/],
    ['invalid UTF-8 in the body', new Uint8Array([...enc('query 1 1 1\n'), 0xff]), /UTF-8/],
  ])('refuses %s', (_name, input, pattern) => {
    expectProtocolError(() => decodeFlexibleClientMessage(typeof input === 'string' ? enc(input) : input), pattern);
  });
});

describe('messages shared with partition-based sync', () => {
  it('decodes and re-encodes UPLOAD, MARK, UNBIND, PING and JSON_ERROR through the partition codec', () => {
    const texts = [
      'upload 2 0 0 0 3 5 0\n',
      'upload 2 0 13 0 4 5 0\n4 5 10 0 2 AB',
      'mark 2 1\n',
      'unbind 2\n',
      'ping 1000 20\n',
      'json_error 212 25 2\n{"message":"bad changes"}',
    ];
    for (const text of texts) expect(dec(encodeFlexibleClientMessage(decodeFlexibleClientMessage(enc(text))))).toBe(text);
  });

  it('decodes and re-encodes the server messages FLX shares', () => {
    const texts = ['ident 1 7 8375000503961609407\n', 'mark 2 1\n', 'unbound 2\n', 'pong 1000\n', 'error 200 6 1 2\nclosed', 'log_message 0 27\n{"level":"info","msg":"hi"}'];
    for (const text of texts) expect(dec(encodeFlexibleServerMessage(decodeFlexibleServerMessage(enc(text))))).toBe(text);
  });

  it('refuses unknown messages in both directions', () => {
    expectProtocolError(() => decodeFlexibleClientMessage(enc('test 1\n')), /unknown client message/);
    expectProtocolError(() => decodeFlexibleServerMessage(enc('alloc 1 2\n')), /unknown server message/);
  });
});

describe('flexible DOWNLOAD', () => {
  const text = 'download 2 5 3 5 987 3 5 1 1 0.5 0 19 0\n5 3 1000 7 4 4 ABCD';

  it('reads query version, batch state and progress estimate in place of downloadable bytes', () => {
    const msg = decodeFlexibleServerMessage(enc(text)) as FlexibleDownloadMessage;
    expect(msg).toMatchObject({
      sessionIdent: 2,
      downloadServerVersion: 5,
      downloadClientVersion: 3,
      latestServerVersion: 5,
      latestServerVersionSalt: 987n,
      uploadClientVersion: 3,
      uploadServerVersion: 5,
      queryVersion: 1,
      batchState: 'lastInBatch',
      progressEstimate: 0.5,
    });
    expect(msg.changesets).toHaveLength(1);
    expect(msg.changesets[0]).toMatchObject({ serverVersion: 5, lastIntegratedClientVersion: 3, originTimestamp: 1000, originFileIdent: 7, originalChangesetSize: 4 });
    expect(dec(encodeFlexibleServerMessage(msg))).toBe(text);
    const { wireBody: _w, ...fresh } = msg;
    expect(dec(encodeFlexibleServerMessage(fresh))).toBe(text);
  });

  it('writes every batch state and estimate the client accepts', () => {
    const base: FlexibleDownloadMessage = {
      type: 'download',
      sessionIdent: 1,
      downloadServerVersion: 9,
      downloadClientVersion: 0,
      latestServerVersion: 9,
      latestServerVersionSalt: 11n,
      uploadClientVersion: 0,
      uploadServerVersion: 0,
      queryVersion: 2,
      batchState: 'moreToCome',
      progressEstimate: 0.25,
      changesets: [{ serverVersion: 9, lastIntegratedClientVersion: 0, originTimestamp: 1, originFileIdent: 1, originalChangesetSize: 1, changeset: enc('x') }],
    };
    expect(dec(encodeFlexibleServerMessage(base)).split('\n')[0]).toBe('download 1 9 0 9 11 0 0 2 0 0.25 0 13 0');
    expect(dec(encodeFlexibleServerMessage({ ...base, batchState: 'steadyState', progressEstimate: 1, changesets: [] }))).toBe('download 1 9 0 9 11 0 0 2 2 1 0 0 0\n');
    expect(dec(encodeFlexibleServerMessage({ ...base, batchState: 'lastInBatch', progressEstimate: 0 })).split('\n')[0]).toBe('download 1 9 0 9 11 0 0 2 1 0 0 13 0');
    expect((decodeFlexibleServerMessage(enc('download 1 9 0 9 11 0 0 2 2 1e-05 0 0 0\n')) as FlexibleDownloadMessage).progressEstimate).toBe(0.00001);
  });

  it('compresses a large bootstrap body and reads it back', () => {
    const changesets = Array.from({ length: 50 }, (_, i) => ({ serverVersion: 7, lastIntegratedClientVersion: 0, originTimestamp: 5, originFileIdent: 1, originalChangesetSize: 64, changeset: new Uint8Array(64).fill(i) }));
    const msg: FlexibleDownloadMessage = { type: 'download', sessionIdent: 3, downloadServerVersion: 7, downloadClientVersion: 0, latestServerVersion: 7, latestServerVersionSalt: 1n, uploadClientVersion: 0, uploadServerVersion: 0, queryVersion: 1, batchState: 'moreToCome', progressEstimate: 0.1, changesets };
    const bytes = encodeFlexibleServerMessage(msg);
    expect(dec(bytes.subarray(0, 60)).split('\n')[0]).toMatch(/^download 3 7 0 7 1 0 0 1 0 0\.1 1 \d+ \d+$/);
    const back = decodeFlexibleServerMessage(bytes) as FlexibleDownloadMessage;
    expect(back.wireBody?.compressed).toBe(true);
    expect(back.changesets.map((c) => c.changeset[0])).toEqual(changesets.map((_, i) => i));
  });

  it('refuses to send what realm-core rejects: an empty message before the end of a batch, version 0, an estimate outside 0..1', () => {
    const base: FlexibleDownloadMessage = { type: 'download', sessionIdent: 1, downloadServerVersion: 1, downloadClientVersion: 0, latestServerVersion: 1, latestServerVersionSalt: 1n, uploadClientVersion: 0, uploadServerVersion: 0, queryVersion: 1, batchState: 'moreToCome', progressEstimate: 0.5, changesets: [] };
    expectProtocolError(() => encodeFlexibleServerMessage(base), /last of its batch/);
    const cs = { serverVersion: 0, lastIntegratedClientVersion: 0, originTimestamp: 1, originFileIdent: 1, originalChangesetSize: 1, changeset: enc('x') };
    expectProtocolError(() => encodeFlexibleServerMessage({ ...base, changesets: [cs] }), /server version 0/);
    for (const progressEstimate of [1.5, -0.1, Number.NaN, Infinity]) {
      expectProtocolError(() => encodeFlexibleServerMessage({ ...base, batchState: 'steadyState', progressEstimate }), /progress estimate/);
    }
  });

  it.each([
    ['a PBS download (11 fields)', 'download 1 0 0 0 0 0 0 0 0 0 0\n', /fields/],
    ['a batch state of 3', 'download 1 0 0 0 0 0 0 1 3 1 0 0 0\n', /batch_state/],
    ['an estimate above 1', 'download 1 0 0 0 0 0 0 1 2 1.5 0 0 0\n', /outside/],
    ['a negative estimate', 'download 1 0 0 0 0 0 0 1 2 -0.5 0 0 0\n', /decimal/],
    ['an estimate that is not a number', 'download 1 0 0 0 0 0 0 1 2 nan 0 0 0\n', /decimal/],
    ['a changeset at server version 0', 'download 1 0 0 0 0 0 0 1 2 1 0 16 0\n0 0 1 1 4 4 xxxx', /server version 0/],
    ['a body shorter than declared', 'download 1 5 0 5 1 0 0 1 2 1 0 19 0\n5 0 1 1 4 4 AB', /truncated/],
  ])('refuses %s', (_name, text, pattern) => {
    expectProtocolError(() => decodeFlexibleServerMessage(enc(text)), pattern);
  });

  it('refuses a compressed body whose sizes lie', () => {
    const body = encodeDownloadBody([{ serverVersion: 3, lastIntegratedClientVersion: 0, originTimestamp: 1, originFileIdent: 1, originalChangesetSize: 2000, changeset: new Uint8Array(2000) }]);
    const z = deflateSync(body, { level: 1 });
    const header = (u: number, c: number): Uint8Array => enc(`download 1 3 0 3 1 0 0 1 1 1 1 ${u} ${c}\n`);
    expect((decodeFlexibleServerMessage(new Uint8Array([...header(body.length, z.length), ...z])) as FlexibleDownloadMessage).changesets).toHaveLength(1);
    expectProtocolError(() => decodeFlexibleServerMessage(new Uint8Array([...header(body.length + 1, z.length), ...z])), /inflated/);
  });
});

describe('QUERY_ERROR', () => {
  it('has the layout the client parses: code, message size, session, query version, message', () => {
    const text = 'query_error 226 84 2 1\nInvalid query: failed to parse query: "Item": key "summary" is not a queryable field';
    const msg = queryErrorMessage(2, 1, 'Invalid query: failed to parse query: "Item": key "summary" is not a queryable field');
    expect(dec(encodeFlexibleServerMessage(msg))).toBe(text);
    expect(decodeFlexibleServerMessage(enc(text))).toEqual(msg);
  });

  it('never goes to session 0 and never carries a code that aborts the client', () => {
    expectProtocolError(() => encodeFlexibleServerMessage(queryErrorMessage(0, 1, 'x')), /session 0/);
    expectProtocolError(() => decodeFlexibleServerMessage(enc('query_error 226 1 0 1\nx')), /session ident 0/);
    expectProtocolError(() => decodeFlexibleServerMessage(enc('query_error 224 1 1 1\nx')), /never be sent/);
  });
});

describe('compensating writes and role changes', () => {
  it('builds a 231 JSON_ERROR the client reports as a non-fatal warning with decodable keys', () => {
    const msg = compensatingWriteMessage(2, {
      rejectedClientVersion: 4,
      compensatingWriteServerVersion: 9,
      updates: [{ table: 'Item', primaryKey: { type: 'ObjectId', value: '65f0a1b2c3d4e5f601234567' }, reason: 'write to ObjectID("65f0a1b2c3d4e5f601234567") in table "Item" not allowed' }],
    });
    const back = decodeFlexibleServerMessage(encodeFlexibleServerMessage(msg)) as FlexibleServerMessage & { type: 'json_error' };
    expect(back.code).toBe(231);
    expect(back.body).toMatchObject({ action: 'Warning', tryAgain: true, shouldClientReset: false, rejectedClientVersion: 4, compensatingWriteServerVersion: 9 });
    expect(parseRejectedUpdates(back.body.rejectedUpdates)).toEqual([
      { table: 'Item', primaryKey: { type: 'ObjectId', value: '65f0a1b2c3d4e5f601234567' }, reason: 'write to ObjectID("65f0a1b2c3d4e5f601234567") in table "Item" not allowed' },
    ]);
  });

  it('refuses a 231 without the server version of the undo or with an undecodable key', () => {
    const good = compensatingWriteMessage(2, { rejectedClientVersion: 4, compensatingWriteServerVersion: 9, updates: [{ table: 'T', primaryKey: { type: 'Int', value: 1 }, reason: 'r' }] });
    const { compensatingWriteServerVersion: _v, ...noVersion } = good.body;
    expectProtocolError(() => encodeFlexibleServerMessage({ ...good, body: noVersion }), /compensatingWriteServerVersion/);
    const forged = JSON.stringify({ ...good.body, rejectedUpdates: [{ table: 'T', pk: 'QA==', reason: 'r' }] });
    expectProtocolError(() => decodeFlexibleServerMessage(enc(`json_error 231 ${forged.length} 2\n${forged}`)), /unsupported payload type/);
  });

  it('restarts the session on a permission change with a transient 200', () => {
    const msg = permissionsChangedMessage(5);
    expect(dec(encodeFlexibleServerMessage(msg)).split('\n')[0]).toMatch(/^json_error 200 \d+ 5$/);
    expect(msg.body).toMatchObject({ action: 'Transient', tryAgain: true, shouldClientReset: false });
  });
});

describe('hostile input', () => {
  const samples = [
    'bind 1 37 0 1 0\n{"schemaVersion":0,"sessionReason":0}',
    'ident 2 7 123456 5 3 5 987 1 32\n{"Item":"(owner_id == \\"abc\\")"}',
    'query 2 2 78\n{"Item":"(done == false) OR (owner_id == \\"abc\\")","Person":"(TRUEPREDICATE)"}',
    'download 2 5 3 5 987 3 5 1 1 0.5 0 19 0\n5 3 1000 7 4 4 ABCD',
    'query_error 226 3 2 1\nbad',
  ].map(enc);

  it('never throws anything but SyncProtocolError on mutated frames', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: samples.length - 1 }), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }), (i, edits) => {
        const bytes = (samples[i] ?? new Uint8Array()).slice();
        for (const [at, v] of edits) bytes[at % bytes.length] = v;
        decodesOrRefuses(bytes, [decodeFlexibleClientMessage, decodeFlexibleServerMessage]);
      }),
      { numRuns: 3000 },
    );
  });

  it('never throws anything but SyncProtocolError on random bytes and truncations', () => {
    for (const sample of samples) {
      for (let cut = 0; cut < sample.length; cut++) {
        expectProtocolError(() => decodeFlexibleClientMessage(sample.subarray(0, cut)));
        expectProtocolError(() => decodeFlexibleServerMessage(sample.subarray(0, cut)));
      }
    }
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 96 }), fc.string().map(enc)), (bytes) => {
        decodesOrRefuses(bytes, [decodeFlexibleClientMessage, decodeFlexibleServerMessage]);
      }),
      { numRuns: 3000 },
    );
  });

  it('bounds bodies by maxBodySize before reading them', () => {
    expectProtocolError(() => decodeFlexibleClientMessage(enc('query 1 1 999999999\n'), { maxBodySize: 1024 }), /exceeds/);
  });
});
