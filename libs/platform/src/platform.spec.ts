import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { FileAdminUserStore } from './admin-users';
import { FileDeploymentStore } from './deployment-store';
import { AppRegistryError, FileAppRegistry } from './app-registry';
import { signJwt, verifyJwt } from './jwt';
import { SigningKeyStore } from './signing-keys';

describe('FileAppRegistry', () => {
  it('creates, finds by either id, lists and removes apps across instances', async () => {
    const dir = makeTempDir();
    try {
      const registry = new FileAppRegistry(dir.path);
      const created = await registry.create({ name: 'todo', groupId: 'g1' });
      expect(created.client_app_id).toMatch(/^todo-[a-z]{5}$/);
      expect(created._id).toMatch(/^[0-9a-f]{24}$/);
      const other = new FileAppRegistry(dir.path);
      expect(await other.getByClientAppId(created.client_app_id)).toEqual(created);
      expect(await other.get(created._id)).toEqual(created);
      expect(await other.list('g1')).toEqual([created]);
      expect(await other.list('g2')).toEqual([]);
      await other.remove(created._id);
      await expect(registry.getByClientAppId(created.client_app_id)).rejects.toMatchObject({ errorCode: 'AppNotFound', httpStatus: 404 });
    } finally {
      dir.remove();
    }
  });

  it('refuses a second app with the same imported client app id', async () => {
    const dir = makeTempDir();
    try {
      const registry = new FileAppRegistry(dir.path);
      await registry.create({ name: 'todo', groupId: 'g', clientAppId: 'todo-abcde' });
      await expect(registry.create({ name: 'todo', groupId: 'g', clientAppId: 'todo-abcde' })).rejects.toBeInstanceOf(AppRegistryError);
    } finally {
      dir.remove();
    }
  });
});

describe('FileAdminUserStore', () => {
  it('generates a password once and authenticates with it', async () => {
    const dir = makeTempDir();
    try {
      const store = new FileAdminUserStore(dir.path);
      const first = await store.bootstrap('admin', undefined);
      expect(first.generatedPassword).toMatch(/^[A-Za-z0-9_-]{24}$/);
      const second = await new FileAdminUserStore(dir.path).bootstrap('admin', undefined);
      expect(second).toEqual({ groupId: first.groupId, username: 'admin' });
      expect(await store.authenticate('admin', first.generatedPassword!)).toMatchObject({ username: 'admin', groupIds: [first.groupId] });
      expect(await store.authenticate('admin', 'wrong password')).toBeUndefined();
      expect(await store.authenticate('nobody', first.generatedPassword!)).toBeUndefined();
    } finally {
      dir.remove();
    }
  });

  it('replaces the stored password with a configured one', async () => {
    const dir = makeTempDir();
    try {
      await new FileAdminUserStore(dir.path).bootstrap('admin', 'first password');
      const store = new FileAdminUserStore(dir.path);
      await store.bootstrap('admin', 'second password');
      expect(await store.authenticate('admin', 'first password')).toBeUndefined();
      expect(await store.authenticate('admin', 'second password')).toBeDefined();
    } finally {
      dir.remove();
    }
  });
});

describe('JWT', () => {
  const key = Buffer.alloc(32, 7);
  const now = 1_700_000_000;

  it('round-trips claims signed with the key', () => {
    const token = signJwt({ sub: 'u1', iat: now, exp: now + 60, user_data: { a: 1 } }, key);
    expect(token.split('.')).toHaveLength(3);
    expect(verifyJwt(token, key, now)).toEqual({ valid: true, claims: { sub: 'u1', iat: now, exp: now + 60, user_data: { a: 1 } } });
  });

  it('refuses expired, forged, alg none and malformed tokens', () => {
    const token = signJwt({ sub: 'u1', iat: now, exp: now + 60 }, key);
    expect(verifyJwt(token, key, now + 60)).toEqual({ valid: false, reason: 'expired' });
    expect(verifyJwt(token, Buffer.alloc(32, 8), now)).toEqual({ valid: false, reason: 'signature' });
    const [, payload] = token.split('.');
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    expect(verifyJwt(none, key, now)).toEqual({ valid: false, reason: 'signature' });
    const tampered = token.replace(payload, Buffer.from(JSON.stringify({ sub: 'admin', iat: now, exp: now + 60 })).toString('base64url'));
    expect(verifyJwt(tampered, key, now)).toEqual({ valid: false, reason: 'signature' });
    expect(verifyJwt('not-a-token', key, now)).toEqual({ valid: false, reason: 'malformed' });
  });
});

describe('SigningKeyStore', () => {
  it('creates a key once and returns the same key after a restart', async () => {
    const dir = makeTempDir();
    try {
      const key = await new SigningKeyStore(dir.path).get('admin');
      expect(key).toHaveLength(32);
      expect(await new SigningKeyStore(dir.path).get('admin')).toEqual(key);
      expect(await new SigningKeyStore(dir.path).get('app-x')).not.toEqual(key);
    } finally {
      dir.remove();
    }
  });

  it('derives the same per-purpose keys from a shared master key in every replica, writing no file', async () => {
    const one = makeTempDir();
    const two = makeTempDir();
    try {
      const master = Buffer.alloc(32, 9);
      const key = await new SigningKeyStore(one.path, master).get('app-x');
      expect(key).toHaveLength(32);
      expect(await new SigningKeyStore(two.path, master).get('app-x')).toEqual(key);
      expect(await new SigningKeyStore(two.path, master).get('admin')).not.toEqual(key);
      expect(await new SigningKeyStore(two.path, Buffer.alloc(32, 8)).get('app-x')).not.toEqual(key);
      expect(existsSync(join(one.path, 'platform', 'keys'))).toBe(false);
    } finally {
      one.remove();
      two.remove();
    }
  });
});

describe('FileDeploymentStore', () => {
  it('keeps every deployment and serves the latest one, byte for byte', async () => {
    const dir = makeTempDir();
    try {
      const store = new FileDeploymentStore(dir.path);
      expect(await store.current('a1')).toBeUndefined();
      const first = await store.deploy('a1', new Map([['config.json', Buffer.from('{"name":"x"}\n')]]), { origin: 'test' });
      const second = await store.deploy('a1', new Map([['config.json', Buffer.from('{"name":"y"}\n')], ['values/v.json', new Uint8Array([0, 255, 10])]]), { origin: 'test' });
      expect([first.version, second.version]).toEqual([1, 2]);
      const current = await new FileDeploymentStore(dir.path).current('a1');
      expect(current?.record).toEqual(second);
      expect(Buffer.from(current!.files.get('config.json')!).toString()).toBe('{"name":"y"}\n');
      expect([...current!.files.get('values/v.json')!]).toEqual([0, 255, 10]);
      expect((await store.list('a1')).map((record) => record.version)).toEqual([2, 1]);
    } finally {
      dir.remove();
    }
  });
});
