import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FunctionRuntimeError } from '../function-runtime.error';
import { makeRuntime, APP } from '../testing/runtime-fixture';
import { EgressPolicy, embeddedIpv4 } from './egress-policy';
import { NodeHttpPort } from './http.port';

describe('EgressPolicy', () => {
  const policy = new EgressPolicy();

  it('closes loopback, link-local, private, shared and reserved ranges, and opens public addresses', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '0.0.0.0', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', 'fc00::1', 'ff02::1']) {
      expect(policy.refusal(address), address).toBeDefined();
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111']) expect(policy.refusal(address), address).toBeUndefined();
    expect(policy.refusal('169.254.169.254')).toMatch(/link-local/);
  });

  it('judges IPv6 forms that carry an IPv4 address by that address', () => {
    expect(embeddedIpv4('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(embeddedIpv4('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(embeddedIpv4('64:ff9b::a9fe:a9fe')).toBe('169.254.169.254');
    expect(embeddedIpv4('2002:c0a8:0101::1')).toBe('192.168.1.1');
    for (const address of ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:0:7f00:1', '::ffff:10.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::1', '::127.0.0.1']) {
      expect(policy.refusal(address), address).toBeDefined();
    }
    expect(policy.refusal('::ffff:8.8.8.8')).toBeUndefined();
  });

  it('opens CIDR blocks, addresses and host names of the allow list, and everything with *', () => {
    const allowing = new EgressPolicy(['10.1.0.0/16', '127.0.0.1', 'Internal.Example', '*.svc.local']);
    expect(allowing.refusal('10.1.2.3')).toBeUndefined();
    expect(allowing.refusal('10.2.0.1')).toBeDefined();
    expect(allowing.refusal('127.0.0.1')).toBeUndefined();
    expect(allowing.refusal('::ffff:127.0.0.1')).toBeUndefined();
    expect(allowing.refusal('127.0.0.2')).toBeDefined();
    expect(allowing.allowsHost('internal.example')).toBe(true);
    expect(allowing.allowsHost('db.svc.local')).toBe(true);
    expect(allowing.allowsHost('svc.local.evil.example')).toBe(false);
    expect(new EgressPolicy(['*']).refusal('127.0.0.1')).toBeUndefined();
  });
});

// A function's context.http, as functions call it, against servers on this machine.
describe('context.http egress', () => {
  let target: Server;
  let redirector: Server;
  let targetPort: number;
  let redirectorPort: number;

  const listen = async (server: Server): Promise<number> => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };

  beforeAll(async () => {
    target = createServer((_req, res) => res.end('inside'));
    redirector = createServer((req, res) => {
      res.statusCode = 302;
      res.setHeader('location', `http://127.0.0.1:${targetPort}${req.url ?? '/'}`);
      res.end();
    });
    targetPort = await listen(target);
    redirectorPort = await listen(redirector);
  });

  afterAll(async () => {
    await new Promise((resolve) => target.close(resolve));
    await new Promise((resolve) => redirector.close(resolve));
  });

  const fetchText = 'exports = async (url) => (await context.http.get({ url, followRedirects: true })).body.text();';

  const callWith = async (allow: string[], url: string): Promise<unknown> => {
    const rt = makeRuntime({}, { http: new NodeHttpPort({ timeoutMs: 5_000, allow }) });
    rt.functions.deploy(APP, { get: fetchText });
    try {
      return (await rt.call('get', [url])).result;
    } catch (error) {
      return error;
    } finally {
      await rt.runtime.onModuleDestroy();
    }
  };

  const refused = (outcome: unknown): string => {
    expect(outcome).toBeInstanceOf(FunctionRuntimeError);
    const message = (outcome as Error).message;
    expect(message).toMatch(/context\.http refused to connect to .*TESSERA_FUNCTION_HTTP_ALLOW/);
    return message;
  };

  it('refuses loopback in every spelling, by name and through a redirect, with a clear error', async () => {
    const urls = [
      `http://127.0.0.1:${targetPort}/`,
      `http://localhost:${targetPort}/`,
      `http://2130706433:${targetPort}/`,
      `http://0x7f000001:${targetPort}/`,
      `http://0177.0.0.1:${targetPort}/`,
      `http://127.1:${targetPort}/`,
      `http://[::1]:${targetPort}/`,
      `http://[::ffff:127.0.0.1]:${targetPort}/`,
      `http://0.0.0.0:${targetPort}/`,
      'http://169.254.169.254/latest/meta-data/',
    ];
    for (const url of urls) expect(refused(await callWith([], url)), url).toMatch(/loopback|this network|link-local/);
    // The redirector is allowed by name; the address it sends the function to is not.
    const redirected = refused(await callWith(['localhost'], `http://localhost:${redirectorPort}/secret`));
    expect(redirected).toContain(`http://127.0.0.1:${targetPort}/secret`);
  });

  it('reaches what the allow list opens', async () => {
    expect(await callWith(['127.0.0.1'], `http://127.0.0.1:${targetPort}/`)).toBe('inside');
    expect(await callWith(['127.0.0.0/8'], `http://2130706433:${targetPort}/`)).toBe('inside');
    expect(await callWith(['localhost'], `http://localhost:${targetPort}/`)).toBe('inside');
    expect(await callWith(['127.0.0.1', '::1'], `http://localhost:${redirectorPort}/x`)).toBe('inside');
    expect(await callWith(['*'], `http://[::ffff:127.0.0.1]:${targetPort}/`)).toBe('inside');
  });
});
