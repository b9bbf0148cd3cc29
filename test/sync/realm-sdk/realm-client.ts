import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { makeTempDir } from '@tessera/testing';
import { Binary, Decimal128, Double, EJSON, Int32, Long, ObjectId } from 'bson';

// The real Realm JS SDK 12.15.0, built from the public realm-js and realm-core sources (its npm package has
// no Linux Node binary), found through TESSERA_REALM_SDK: the path of the built `realm` package. Nothing
// built from those sources is part of this repository.
const sdkPath = process.env['TESSERA_REALM_SDK'];

/** Why the real-client tests cannot run here, or undefined when they can. */
export const realmSdkSkipReason: string | undefined = !sdkPath
  ? 'TESSERA_REALM_SDK is not set: build the Realm JS SDK 12.15.0 from realm-js v12.15.0 and realm-core v14.14.0 and point it at the built `realm` package'
  : !existsSync(join(sdkPath, 'package.json'))
    ? `TESSERA_REALM_SDK=${sdkPath} holds no package.json`
    : undefined;

/** Longer than any operation's own timeout, shorter than a test's. */
const callTimeoutMs = 25_000;

export interface Task {
  _id: string;
  _partition?: string | number | null;
  name: string;
  done?: boolean;
}

export interface SdkEvent {
  event: 'sync-error' | 'client-reset';
  [key: string]: unknown;
}

interface Answer {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
  code?: unknown;
}

/** Thrown when the SDK answered an operation with an error: its message and code as the SDK gave them. */
export class SdkError extends Error {
  constructor(
    message: string,
    readonly code: unknown,
  ) {
    super(message);
  }
}

/**
 * A value as the tests compare it: every number (Int32, Long, Double or a JS number) as a JS number, and the
 * other BSON values as tagged plain data, so a value the device holds, one the store returns and one a test
 * wrote compare equal when they hold the same thing (the BSON type is checked separately, where it matters).
 */
export function canonical(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Long) return value.toNumber();
  if (value instanceof Int32 || value instanceof Double) return value.valueOf();
  if (value instanceof Date) return { $date: value.toISOString() };
  if (value instanceof ObjectId) return { $oid: value.toHexString() };
  if (value instanceof Decimal128) return { $decimal: value.toString() };
  if (value instanceof Binary) return { $binary: Buffer.from(value.buffer).toString('hex'), subtype: value.sub_type };
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, canonical(item)]));
  return value;
}

/**
 * One device: a real Realm JS SDK client in its own process (test/sync/realm-sdk/realm-client-process.cjs),
 * with its own files, driven one operation at a time. `stop()` ends the process as an app killed by its user
 * ends; a new `RealmDevice` on the same directory is the app started again.
 */
export class RealmDevice {
  readonly events: SdkEvent[] = [];
  private readonly pending = new Map<number, (answer: Answer) => void>();
  private nextId = 1;
  private readonly child: ChildProcessWithoutNullStreams;
  private stderr = '';
  private exited = false;

  private constructor(readonly dir: string) {
    this.child = spawn(process.execPath, [join(__dirname, 'realm-client-process.cjs')], {
      env: { ...process.env, TESSERA_REALM_SDK: sdkPath, REALM_CLIENT_DIR: dir },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      let message: Answer | SdkEvent;
      try {
        message = JSON.parse(line) as Answer | SdkEvent;
      } catch {
        return; // the SDK's own console output
      }
      if ('event' in message) this.events.push(message);
      else this.pending.get(message.id)?.(message);
    });
    this.child.stderr.on('data', (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString('utf8')).slice(-8_000)));
    this.child.on('exit', () => {
      this.exited = true;
      for (const settle of this.pending.values()) settle({ id: 0, ok: false, error: `the client process exited: ${this.stderr}` });
    });
  }

  /** A new device with empty storage, or the device whose files are in `dir` started again. */
  static start(dir?: string): RealmDevice {
    return new RealmDevice(dir ?? makeTempDir('tessera-realm-device-').path);
  }

  async call<T = unknown>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    if (this.exited) throw new Error(`the client process has exited: ${this.stderr}`);
    const id = this.nextId++;
    let timer: NodeJS.Timeout | undefined;
    const answer = await new Promise<Answer>((resolve) => {
      this.pending.set(id, resolve);
      // An operation the SDK never answers fails the test with what the client printed, not a bare timeout.
      timer = setTimeout(() => resolve({ id, ok: false, error: `no answer to ${op} in ${callTimeoutMs} ms; the client printed: ${this.stderr}` }), callTimeoutMs);
      this.child.stdin.write(`${JSON.stringify({ ...args, id, op })}\n`);
    });
    clearTimeout(timer);
    this.pending.delete(id);
    if (!answer.ok) throw new SdkError(answer.error ?? 'unknown error', answer.code);
    return answer.result as T;
  }

  login(baseUrl: string, appId: string, credentials: { email: string; password: string; register?: boolean } | 'anonymous'): Promise<{ userId: string }> {
    return this.call('login', { baseUrl, appId, ...(credentials === 'anonymous' ? {} : credentials) });
  }

  open(partition: string | number, options: { partitionType?: 'string' | 'int'; schema?: unknown[]; clientReset?: 'recoverUnsyncedChanges' | 'discardUnsyncedChanges' | 'recoverOrDiscardUnsyncedChanges' | 'manual'; timeoutMs?: number } = {}): Promise<{ path: string }> {
    return this.call('open', { partition, ...options });
  }

  create(task: Task): Promise<void> {
    return this.call('create', { task });
  }

  update(id: string, changes: Partial<Task>): Promise<void> {
    return this.call('update', { taskId: id, changes });
  }

  remove(id: string): Promise<void> {
    return this.call('remove', { taskId: id });
  }

  tasks(): Promise<Task[]> {
    return this.call('tasks');
  }

  /** Resolves when the local objects hold `ids` (and `fields`) and lack `absent`; rejects with what it holds after the timeout. */
  waitFor(expected: { ids?: string[]; absent?: string[]; fields?: Record<string, Partial<Task>>; timeoutMs?: number }): Promise<Task[]> {
    return this.call('waitFor', expected);
  }

  upload(timeoutMs?: number): Promise<void> {
    return this.call('upload', timeoutMs ? { timeoutMs } : {});
  }

  download(timeoutMs?: number): Promise<void> {
    return this.call('download', timeoutMs ? { timeoutMs } : {});
  }

  /** Creates (or updates by primary key) an object of `type`; `{ __link: [type, primaryKey] }` links to a stored object. */
  put(type: string, value: Record<string, unknown>): Promise<void> {
    return this.call('put', { type, value: EJSON.stringify(value, { relaxed: false }) });
  }

  /** Sets `changes` on the object of `type` with primary key `id`. */
  change(type: string, id: unknown, changes: Record<string, unknown>): Promise<void> {
    return this.call('change', { type, key: EJSON.stringify(id, { relaxed: false }), changes: EJSON.stringify(changes, { relaxed: false }) });
  }

  /** The device's objects of `type` (matching `query`), in primary key order, as `canonical` values. */
  async objects(type: string, query?: string): Promise<Array<Record<string, unknown>>> {
    return canonical(EJSON.parse(await this.call<string>('objects', { type, ...(query ? { query } : {}) }), { relaxed: false })) as Array<Record<string, unknown>>;
  }

  /** Resolves when `query` (every object by default) on `type` matches `count` objects on the device. */
  waitForCount(type: string, count: number, query?: string, timeoutMs?: number): Promise<number> {
    return this.call('waitForCount', { type, count, ...(query ? { query } : {}), ...(timeoutMs ? { timeoutMs } : {}) });
  }

  pause(): Promise<void> {
    return this.call('pause');
  }

  resume(): Promise<void> {
    return this.call('resume');
  }

  callFunction(name: string, ...args: unknown[]): Promise<unknown> {
    return this.call('callFunction', { name, args });
  }

  refreshCustomData(): Promise<Record<string, unknown>> {
    return this.call('refreshCustomData');
  }

  closeRealm(): Promise<void> {
    return this.call('close');
  }

  /** Ends the process: closes its realm when it can, kills it when it does not end in 5 s. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

/** How a test's devices open their app: a partition, or flexible sync with these subscriptions. */
export interface DeviceOpening {
  schema: unknown[];
  partition?: string;
  subscriptions?: Array<{ name: string; type: string; query: string }>;
}

/**
 * The devices of one test app: each `open()` starts a device, logs it in anonymously to the app `target()`
 * names (read when the device opens, so a `beforeAll` may set it) and opens the partition or flexible sync;
 * `stopAll()` stops every device opened.
 */
export function anonymousDevices(target: () => { url: string; clientAppId: string }, opening: DeviceOpening): { open(): Promise<RealmDevice>; stopAll(): Promise<void> } {
  const devices: RealmDevice[] = [];
  return {
    async open() {
      const device = RealmDevice.start();
      devices.push(device);
      const { url, clientAppId } = target();
      await device.login(url, clientAppId, 'anonymous');
      if (opening.partition !== undefined) await device.open(opening.partition, { schema: opening.schema });
      else await device.call('openFlexible', { schema: opening.schema, subscriptions: opening.subscriptions ?? [] });
      return device;
    },
    async stopAll() {
      await Promise.all(devices.map((device) => device.stop()));
    },
  };
}
