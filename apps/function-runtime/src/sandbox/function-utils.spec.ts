/**
 * `utils.crypto` and `utils.jwt` as App Services documented them (functions/globals), run in a real sandbox and
 * checked against Node's crypto and against the docs' own examples: what an App Services function encrypted or
 * signed opens here, and the reverse.
 */
import { createCipheriv, createDecipheriv, createHmac, createPublicKey, generateKeyPairSync, randomBytes, sign, verify, constants } from 'node:crypto';
import { APP, makeRuntime } from '../testing/runtime-fixture';

// The docs' example key and what its `encrypt("aes", "MongoDB is great!", key)` returned.
const DOCS_AES_KEY = '603082712271C525E087BD999A4E0738';
const DOCS_CIPHERTEXT = 'WPBuIvJ6Bity43Uh822dW8QlVYVJaFUiDeUjlTiJXzptUuTYIKPlXekBQAJb';
// The docs' utils.jwt example: HS512 with the secret "SuperSecret".
const DOCS_JWT =
  'eyJhbGciOiJIUzUxMiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvZSBTY2htb2UiLCJpYXQiOjE1NjU3MjEyMjMxODd9.-QL15ldu2BYuJokNWT6YRiwZQIiIpvq6Kyv-C6qslNdNiUVxo8zqLJZ1iEkNf2yZKMIrQuMCtIC1tzd2H31AxA';

describe('utils.crypto and utils.jwt', () => {
  const rt = makeRuntime();
  afterAll(() => rt.runtime.close());
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const rsaPrivatePkcs1 = rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const rsaPublicPkcs1 = rsa.publicKey.export({ type: 'pkcs1', format: 'pem' }).toString();

  async function run(body: string, args: unknown[] = []): Promise<unknown> {
    rt.functions.deploy(APP, { f: `exports = function(a, b, c) { ${body} };` });
    return (await rt.call('f', args)).result;
  }
  async function failure(body: string, args: unknown[] = []): Promise<string> {
    return String(await run(`try { ${body}; return "no error"; } catch (e) { return e.message; }`, args));
  }

  it("decrypts the docs' AES example with its key, and encrypts as AES-GCM with the nonce first and the tag last", async () => {
    const out = (await run(
      `const sealed = utils.crypto.encrypt("aes", "MongoDB is great!", a);
       return {
         docs: utils.crypto.decrypt("aes", BSON.Binary.fromBase64(b), a).text(),
         sealed: sealed.toBase64(), isBinary: sealed instanceof BSON.Binary,
         again: utils.crypto.encrypt("aes", "MongoDB is great!", a).toBase64(),
         roundTrip: utils.crypto.decrypt("aes", sealed, a).text(),
       };`,
      [DOCS_AES_KEY, DOCS_CIPHERTEXT],
    )) as Record<string, unknown>;
    expect(out.docs).toBe('MongoDB is great!');
    expect(out.roundTrip).toBe('MongoDB is great!');
    expect(out.isBinary).toBe(true);
    expect(out.again).not.toBe(out.sealed); // a fresh nonce per message
    const sealed = Buffer.from(String(out.sealed), 'base64');
    expect(sealed.length).toBe(12 + 17 + 16);
    const decipher = createDecipheriv('aes-256-gcm', Buffer.from(DOCS_AES_KEY), sealed.subarray(0, 12));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    expect(Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]).toString()).toBe('MongoDB is great!');
  });

  it('takes 16-, 24- and 32-byte AES keys and binary messages, and opens what Node sealed the same way', async () => {
    const key16 = 'k'.repeat(16);
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-128-gcm', Buffer.from(key16), nonce);
    const fromNode = Buffer.concat([nonce, cipher.update(Buffer.from([0, 1, 2, 255])), cipher.final(), cipher.getAuthTag()]).toString('base64');
    const out = await run(
      `return [
         utils.crypto.decrypt("aes", BSON.Binary.fromBase64(a), b).toHex(),
         utils.crypto.decrypt("aes", utils.crypto.encrypt("AES", BSON.Binary.fromHex("00ff"), "y".repeat(24)), "y".repeat(24)).toHex(),
       ];`,
      [fromNode, key16],
    );
    expect(out).toEqual(['000102ff', '00ff']);
  });

  it('refuses a wrong key, an altered message, a bad key size and an unknown encryption type, with a message', async () => {
    const key = 'a'.repeat(32);
    expect(await failure(`utils.crypto.decrypt("aes", utils.crypto.encrypt("aes", "x", a), "b".repeat(32))`, [key])).toMatch(/authentication failed/);
    expect(
      await failure(
        `const s = utils.crypto.encrypt("aes", "secret text", a); const bytes = Buffer.from(s.toBase64(), "base64"); bytes[14] ^= 1;
         utils.crypto.decrypt("aes", BSON.Binary.fromBase64(bytes.toString("base64")), a)`,
        [key],
      ),
    ).toMatch(/authentication failed/);
    expect(await failure(`utils.crypto.encrypt("aes", "x", "short")`)).toMatch(/invalid AES key size 5/);
    expect(await failure(`utils.crypto.encrypt("des", "x", a)`, [key])).toMatch(/unsupported encryption type 'des'/);
    expect(await failure(`utils.crypto.decrypt("aes", BSON.Binary.fromHex("00"), a)`, [key])).toMatch(/too short/);
    expect(await failure(`utils.crypto.encrypt("aes", { not: "text" }, a)`, [key])).toMatch(/must be a string or a BSON.Binary/);
  });

  it('signs with an RSA private key (PSS by default, or PKCS #1 v1.5) and verifies with the public key', async () => {
    const out = (await run(
      `return {
         pss: utils.crypto.sign("rsa", "MongoDB is great!", a).toBase64(),
         pkcs: utils.crypto.sign("rsa", "MongoDB is great!", a, "pkcs1v15").toBase64(),
         ownPss: utils.crypto.verify("rsa", "MongoDB is great!", b, utils.crypto.sign("rsa", "MongoDB is great!", a, "pss"), "pss"),
         altered: utils.crypto.verify("rsa", "MongoDB is great?", b, utils.crypto.sign("rsa", "MongoDB is great!", a)),
         wrongScheme: utils.crypto.verify("rsa", "MongoDB is great!", b, utils.crypto.sign("rsa", "MongoDB is great!", a, "pss"), "pkcs1v15"),
         nodeSigned: utils.crypto.verify("rsa", "m", b, BSON.Binary.fromBase64(c), "pkcs1v15"),
       };`,
      [rsaPrivatePkcs1, rsaPublicPkcs1, sign('sha256', Buffer.from('m'), rsa.privateKey).toString('base64')],
    )) as Record<string, unknown>;
    expect(verify('sha256', Buffer.from('MongoDB is great!'), { key: rsa.publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO }, Buffer.from(String(out.pss), 'base64'))).toBe(true);
    expect(Buffer.from(String(out.pkcs), 'base64')).toEqual(sign('sha256', Buffer.from('MongoDB is great!'), rsa.privateKey));
    expect(out).toMatchObject({ ownPss: true, altered: false, wrongScheme: false, nodeSigned: true });
    expect(await failure(`utils.crypto.sign("rsa", "m", "not a key")`)).toMatch(/not a PEM-encoded RSA private key/);
    expect(await failure(`utils.crypto.sign("rsa", "m", a, "oaep")`, [rsaPrivatePkcs1])).toMatch(/unsupported signature scheme 'oaep'/);
    expect(await failure(`utils.crypto.sign("ecdsa", "m", a)`, [rsaPrivatePkcs1])).toMatch(/unsupported encryption type/);
  });

  it("decodes the docs' JWT example with its secret, and encodes the same token from the same claims", async () => {
    const out = (await run(
      `return {
         payload: utils.jwt.decode(a, "SuperSecret", false, ["HS512"]),
         withHeader: utils.jwt.decode(a, "SuperSecret", true),
         encoded: utils.jwt.encode("HS512", { sub: "1234567890", name: "Joe Schmoe", iat: 1565721223187 }, "SuperSecret"),
       };`,
      [DOCS_JWT],
    )) as Record<string, unknown>;
    expect(out.payload).toEqual({ sub: '1234567890', name: 'Joe Schmoe', iat: 1565721223187 });
    expect(out.withHeader).toEqual({ header: { alg: 'HS512', typ: 'JWT' }, payload: out.payload });
    expect(out.encoded).toBe(DOCS_JWT);
  });

  it('encodes and decodes RS, PS and ES tokens with PEM keys, and custom header fields', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pkcs8 = (k: typeof rsa.privateKey) => k.export({ type: 'pkcs8', format: 'pem' }).toString();
    const spki = (k: typeof rsa.publicKey) => k.export({ type: 'spki', format: 'pem' }).toString();
    const out = (await run(
      `const claims = { sub: "u1", n: 2 };
       const rs = utils.jwt.encode("RS256", claims, a.rsaPriv, { kid: "key-1" });
       const ps = utils.jwt.encode("PS384", claims, a.rsaPriv);
       const es = utils.jwt.encode("ES256", claims, a.ecPriv);
       return {
         rs, es,
         rsHeader: utils.jwt.decode(rs, a.rsaPub, true).header,
         ps: utils.jwt.decode(ps, a.rsaPub, false, ["PS384"]),
         esBack: utils.jwt.decode(es, a.ecPub),
       };`,
      [{ rsaPriv: pkcs8(rsa.privateKey), rsaPub: spki(rsa.publicKey), ecPriv: pkcs8(ec.privateKey), ecPub: spki(ec.publicKey) }],
    )) as Record<string, unknown>;
    expect(out.rsHeader).toEqual({ kid: 'key-1', alg: 'RS256', typ: 'JWT' });
    expect(out.ps).toEqual({ sub: 'u1', n: 2 });
    expect(out.esBack).toEqual({ sub: 'u1', n: 2 });
    const [h, p, s] = String(out.rs).split('.') as [string, string, string];
    expect(verify('sha256', Buffer.from(`${h}.${p}`), createPublicKey(spki(rsa.publicKey)), Buffer.from(s, 'base64url'))).toBe(true);
    const [eh, ep, es] = String(out.es).split('.') as [string, string, string];
    expect(verify('sha256', Buffer.from(`${eh}.${ep}`), { key: ec.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(es, 'base64url'))).toBe(true);
  });

  it('refuses a forged, expired, premature, unsigned or unaccepted token, and an HS token checked with a public key', async () => {
    const now = Math.floor(Date.now() / 1000);
    const hs = (claims: object, secret = 'k', alg = 'HS256') => {
      const input = `${Buffer.from(JSON.stringify({ alg, typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
      return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
    };
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.`;
    expect(await failure('utils.jwt.decode(a, "k")', [hs({ sub: 'x' }, 'other')])).toMatch(/signature is invalid/);
    expect(await failure('utils.jwt.decode(a, "k")', [hs({ exp: now - 10 })])).toMatch(/expired/);
    expect(await failure('utils.jwt.decode(a, "k")', [hs({ nbf: now + 3600 })])).toMatch(/not valid yet/);
    expect(await failure('utils.jwt.decode(a, "k")', [none])).toMatch(/unsupported signing method 'none'/);
    expect(await failure('utils.jwt.decode(a, "k", false, ["RS256"])', [hs({ sub: 'x' })])).toMatch(/signing method HS256 is invalid/);
    expect(await failure('utils.jwt.decode(a, b)', [hs({ sub: 'x' }), rsaPublicPkcs1])).toMatch(/signature is invalid/);
    expect(await failure('utils.jwt.decode("a.b", "k")')).toMatch(/invalid number of segments/);
    expect(await failure('utils.jwt.encode("HS256", "text", "k")')).toMatch(/payload must be an object/);
    expect(await failure('utils.jwt.encode("none", {}, "k")')).toMatch(/unsupported signing method/);
    expect(await failure('utils.jwt.encode("ES256", {}, a)', [rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()])).toMatch(/needs an EC key/);
    expect(await run('return utils.jwt.decode(a, "k")', [hs({ sub: 'ok', exp: now + 3600 })])).toEqual({ sub: 'ok', exp: now + 3600 });
  });
});
