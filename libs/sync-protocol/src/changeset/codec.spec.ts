import fc from 'fast-check';
import { fromHex, toHex } from '../bytes';
import { SyncProtocolError } from '../errors';
import { loadConformance } from '../conformance-frames.test';
import { decodeClientMessage, decodeServerMessage } from '../wire/messages';
import { encodeChangeset, parseChangeset } from './codec';
import { formatChangeset } from './debug';
import type { Changeset, Instruction, Payload, PrimaryKey } from './types';
import { Reader, Writer } from './varint';

function expectBadChangeset(bytes: Uint8Array, pattern?: RegExp): void {
  try {
    parseChangeset(bytes);
  } catch (err) {
    expect(err).toBeInstanceOf(SyncProtocolError);
    expect((err as SyncProtocolError).kind).toBe('bad_changeset');
    if (pattern) expect((err as Error).message).toMatch(pattern);
    return;
  }
  throw new Error(`expected ${toHex(bytes)} to be rejected`);
}

describe('changeset integers', () => {
  const vectors: [number | bigint, string][] = [
    [0, '00'],
    [63, '3f'],
    [64, 'c000'],
    [300, 'ac02'],
    [-1, '40'],
    [-2, '41'],
    [-64, '7f'],
    [-65, 'c040'],
    [2n ** 63n - 1n, 'ffffffffffffffffff00'],
    [-(2n ** 63n), 'ffffffffffffffffff40'],
  ];
  it.each(vectors)('encodes %s as %s and decodes it back', (value, hex) => {
    const w = new Writer();
    w.int(value);
    expect(toHex(w.finish())).toBe(hex);
    const r = new Reader(fromHex(hex));
    expect(r.int('int64')).toBe(value);
    expect(r.done).toBe(true);
  });

  it('rejects overlong, truncated, too long and out-of-range integers', () => {
    expect(() => new Reader(fromHex('8000')).int('int64')).toThrow(/overlong/);
    expect(() => new Reader(fromHex('80')).int('int64')).toThrow(/past the end/);
    expect(() => new Reader(fromHex('ffffffffffffffffffff00')).int('int64')).toThrow(/too many bytes/);
    expect(() => new Reader(fromHex('ffffffffffffffffff01')).int('int64')).toThrow(/range/);
    expect(() => new Reader(fromHex('40')).int('uint32')).toThrow(/range/);
    expect(() => new Reader(fromHex('808040')).int('uint8')).toThrow(/too many bytes/);
  });

  it('round-trips every int64 through the writer and the reader', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (v) => {
        const w = new Writer();
        w.int(v);
        const got = new Reader(w.finish()).int('int64');
        expect(BigInt(got)).toBe(v);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('the worked example of the reference', () => {
  const oid = '65f0a1b2c3d4e5f601020304';
  const dog: PrimaryKey = { type: 'ObjectId', value: oid };
  const cs: Changeset = {
    instructions: [
      { type: 'AddTable', table: 'Dog', spec: { kind: 'TopLevel', asymmetric: false, pkField: '_id', pkType: 'ObjectId', pkNullable: false } },
      { type: 'AddColumn', table: 'Dog', field: 'name', valueType: 'String', nullable: false, collectionType: 'Single', keyType: 'Null' },
      { type: 'AddColumn', table: 'Dog', field: 'realm_id', valueType: 'String', nullable: true, collectionType: 'Single', keyType: 'Null' },
      { type: 'AddColumn', table: 'Dog', field: 'toys', valueType: 'String', nullable: false, collectionType: 'List', keyType: 'Null' },
      { type: 'CreateObject', table: 'Dog', object: dog },
      { type: 'Update', table: 'Dog', object: dog, field: 'name', path: [], value: { type: 'String', value: 'Rex' }, isDefault: false, priorSize: 0 },
      { type: 'Update', table: 'Dog', object: dog, field: 'realm_id', path: [], value: { type: 'String', value: 'p1' }, isDefault: false, priorSize: 0 },
      { type: 'ArrayInsert', table: 'Dog', object: dog, field: 'toys', path: [0], value: { type: 'String', value: 'ball' }, priorSize: 0 },
    ],
  };
  const expected = [
    '3f0003446f67',
    '3f01035f6964',
    '3f02046e616d65',
    '3f03087265616c6d5f6964',
    '3f0404746f7973',
    '000000010a00',
    '060002030000',
    '060003030100',
    '060004030001',
    `02000a${oid}`,
    `04000a${oid}02000303526578` + '00',
    `04000a${oid}0300030270310` + '0',
    `08000a${oid}040100030462616c6c00`,
  ].join('');

  it('encodes to the documented 146 bytes with strings interned up front', () => {
    const bytes = encodeChangeset(cs, { interning: 'front' });
    expect(bytes.length).toBe(146);
    expect(toHex(bytes)).toBe(expected);
  });

  it('parses the documented bytes back to the same instructions', () => {
    const parsed = parseChangeset(fromHex(expected));
    expect(parsed.instructions).toEqual(cs.instructions);
    expect(toHex(encodeChangeset(parsed))).toBe(expected);
    expect(formatChangeset(parsed)).toContain(`ArrayInsert Dog[ObjectId(${oid})].toys[0] = "ball" (prior_size 0)`);
  });
});

describe('every instruction and payload type', () => {
  const pks: PrimaryKey[] = [
    { type: 'Null' },
    { type: 'Int', value: -42 },
    { type: 'Int', value: 2n ** 62n },
    { type: 'String', value: 'key' },
    { type: 'ObjectId', value: '0123456789abcdef01234567' },
    { type: 'UUID', value: '00112233445566778899aabbccddeeff' },
    { type: 'GlobalKey', hi: 7, lo: 9 },
  ];
  const payloads: Payload[] = [
    { type: 'Null' },
    { type: 'Int', value: 1234567890123 },
    { type: 'Int', value: -(2n ** 63n) },
    { type: 'Bool', value: true },
    { type: 'String', value: 'héllo ✓' },
    { type: 'Binary', value: new Uint8Array([0, 1, 2, 255]) },
    { type: 'Timestamp', seconds: 1751327999, nanoseconds: 999000000 },
    { type: 'Timestamp', seconds: -5, nanoseconds: -7 },
    { type: 'Float', value: 1.5 },
    { type: 'Double', value: -2.75 },
    { type: 'Decimal', coefficient: (1n << 112n) + 12345n, exponent: -6176, negative: true },
    { type: 'Decimal', coefficient: 64n, exponent: 0, negative: false },
    { type: 'Link', table: 'Child', key: { type: 'String', value: 'c1' } },
    { type: 'ObjectId', value: 'ffeeddccbbaa998877665544' },
    { type: 'UUID', value: '0f0e0d0c0b0a09080706050403020100' },
    { type: 'ObjectValue' },
    { type: 'Dictionary' },
    { type: 'Erased' },
    { type: 'List' },
    { type: 'Set' },
  ];
  const instructions: Instruction[] = [
    { type: 'AddTable', table: 'T', spec: { kind: 'TopLevel', asymmetric: true, pkField: '_id', pkType: 'UUID', pkNullable: true } },
    { type: 'AddTable', table: 'E', spec: { kind: 'Embedded' } },
    { type: 'AddTable', table: 'G', spec: { kind: 'TopLevel', asymmetric: false, pkField: '', pkType: 'GlobalKey', pkNullable: false } },
    { type: 'EraseTable', table: 'T' },
    { type: 'AddColumn', table: 'T', field: 'l', valueType: 'Link', nullable: true, collectionType: 'Dictionary', keyType: 'String', linkTargetTable: 'E' },
    { type: 'AddColumn', table: 'T', field: 'm', valueType: 'Null', nullable: true, collectionType: 'Set', keyType: 'Null' },
    { type: 'EraseColumn', table: 'T', field: 'm' },
    ...pks.flatMap((object): Instruction[] => [
      { type: 'CreateObject', table: 'T', object },
      { type: 'EraseObject', table: 'T', object },
    ]),
    ...payloads.map((value): Instruction => ({ type: 'Update', table: 'T', object: pks[3], field: 'f', path: ['k', 3, 'x'], value, isDefault: true, priorSize: 0 })),
    ...payloads.map((value): Instruction => ({ type: 'Update', table: 'T', object: pks[4], field: 'f', path: [2], value, isDefault: false, priorSize: 7 })),
    { type: 'AddInteger', table: 'T', object: pks[1], field: 'n', path: [], value: -3 },
    { type: 'ArrayInsert', table: 'T', object: pks[1], field: 'l', path: ['a', 0], value: { type: 'Int', value: 1 }, priorSize: 0 },
    { type: 'ArrayMove', table: 'T', object: pks[1], field: 'l', path: [4], ndx2: 1, priorSize: 5 },
    { type: 'ArrayErase', table: 'T', object: pks[1], field: 'l', path: [4], priorSize: 5 },
    { type: 'Clear', table: 'T', object: pks[1], field: 'l', path: [], collectionType: 'Dictionary' },
    { type: 'SetInsert', table: 'T', object: pks[1], field: 's', path: [], value: { type: 'UUID', value: '00112233445566778899aabbccddeeff' } },
    { type: 'SetErase', table: 'T', object: pks[1], field: 's', path: [], value: { type: 'Link', table: 'T', key: { type: 'Int', value: 5 } } },
  ];

  it('round-trips each instruction alone and all of them together, both interning styles', () => {
    for (const instr of instructions) {
      const bytes = encodeChangeset({ instructions: [instr] });
      expect(parseChangeset(bytes).instructions).toEqual([instr]);
    }
    for (const interning of ['inline', 'front'] as const) {
      const bytes = encodeChangeset({ instructions }, { interning });
      const parsed = parseChangeset(bytes);
      expect(parsed.instructions).toEqual(instructions);
      expect(encodeChangeset(parsed)).toEqual(bytes);
    }
  });

  it('renders every instruction on its own line', () => {
    const text = formatChangeset({ instructions });
    expect(text.split('\n')).toHaveLength(instructions.length);
    expect(text).toContain('Decimal(-5192296858534827628530496329232441E-6176)');
    expect(text).toContain('AddColumn T.l: Dictionary<String, Link<E>>?');
    expect(text).toContain('Update T["key"].f["k"][3]["x"] = Timestamp(-5s, -7ns) (default)');
  });
});

describe('recorded changesets', () => {
  const { frames } = loadConformance();
  const changesets: { where: string; bytes: Uint8Array }[] = [];
  for (const f of frames) {
    if (!/^(upload|download) /.test(f.header)) continue;
    const m = f.dir === 'c2s' ? decodeClientMessage(f.bytes) : decodeServerMessage(f.bytes);
    if (m.type === 'upload' || m.type === 'download') {
      for (const c of m.changesets) changesets.push({ where: `${f.file}#${f.seq}`, bytes: c.changeset });
    }
  }

  it('parses every recorded changeset and re-encodes it byte-identically', () => {
    expect(changesets.length).toBeGreaterThan(60);
    for (const { where, bytes } of changesets) {
      const again = encodeChangeset(parseChangeset(bytes));
      expect(Buffer.from(again).equals(Buffer.from(bytes)), where).toBe(true);
    }
  });

  it('reads the conflict scenario as the README describes it', () => {
    const c = changesets.filter((x) => x.where.startsWith('d-') && x.where.endsWith('#62')).map((x) => formatChangeset(parseChangeset(x.bytes)));
    expect(c[1]).toContain('ArrayInsert Item[ObjectId(0000000000000000000000d1)].tags[1] = "B-mid" (prior_size 3)');
    expect(c[1]).toContain('Update Item[ObjectId(0000000000000000000000d1)].tags[0] = "a-by-B" (prior_size 5)');
  });

  it('rejects every recorded changeset cut short', () => {
    for (const { bytes } of changesets.slice(0, 20)) {
      for (let cut = 1; cut < bytes.length; cut += Math.max(1, Math.floor(bytes.length / 25))) {
        const head = bytes.subarray(0, cut);
        try {
          const parsed = parseChangeset(head);
          // A cut can land on an instruction boundary; then what parsed must re-encode exactly.
          expect(Buffer.from(encodeChangeset(parsed)).equals(Buffer.from(head))).toBe(true);
        } catch (err) {
          expect(err).toBeInstanceOf(SyncProtocolError);
        }
      }
    }
  });

  it('never throws anything but SyncProtocolError on mutated or random changesets, and re-encodes whatever it accepts', () => {
    const small = changesets.filter((c) => c.bytes.length < 2000);
    const check = (bytes: Uint8Array): void => {
      let parsed: Changeset;
      try {
        parsed = parseChangeset(bytes);
      } catch (err) {
        if (!(err instanceof SyncProtocolError)) throw err;
        return;
      }
      const again = encodeChangeset(parsed);
      // NaN payloads may change their bit pattern; everything else must be byte-identical.
      if (!parsed.instructions.some((i) => 'value' in i && typeof i.value === 'object' && (i.value.type === 'Double' || i.value.type === 'Float') && Number.isNaN(i.value.value))) {
        expect(Buffer.from(again).equals(Buffer.from(bytes))).toBe(true);
      }
    };
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: small.length - 1 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        (i, edits) => {
          const bytes = (small[i]?.bytes ?? new Uint8Array()).slice();
          for (const [at, v] of edits) bytes[at % Math.max(1, bytes.length)] = v;
          check(bytes);
        },
      ),
      { numRuns: 3000 },
    );
    fc.assert(fc.property(fc.uint8Array({ maxLength: 80 }), check), { numRuns: 3000 });
  });
});

describe('malformed changesets', () => {
  const cases: [string, string, RegExp][] = [
    ['an unknown instruction', '0e', /Unknown instruction/],
    ['an intern index out of order', '3f0103616263', /intern index/],
    ['a duplicate intern string', '3f0001613f010161', /intern string/],
    ['a reference to a string never interned', '0100', /Invalid interned string/],
    ['a bad payload type', '3f000161' + '04' + '00' + '00' + '00' + '00' + '20', /Unsupported data type/],
    ['an ArrayInsert without an index', '3f000161' + '08' + '00' + '00' + '00' + '00' + '0000', /without an index/],
    ['a string longer than the changeset', '3f0005616263', /truncated/],
    ['a bad varint', '3f00ff', /past the end/],
    ['a boolean of 2', '3f000161' + '04' + '00' + '00' + '00' + '00' + '00' + '02', /0 or 1/],
    ['invalid UTF-8', '3f0001ff', /UTF-8/],
    ['a bad path element', '3f000161' + '05' + '00' + '00' + '00' + '01' + '41' + '00' + '00', /path element/],
    ['a bad collection type', '3f000161' + '0b' + '00' + '00' + '00' + '00' + '05', /collection type/],
    ['a bad primary key type', '3f000161' + '02' + '00' + '07', /object key/],
    ['a bad table type', '3f000161' + '00' + '00' + '03', /table type/],
  ];
  it.each(cases)('rejects %s', (_name, hex, pattern) => expectBadChangeset(fromHex(hex), pattern));
});
