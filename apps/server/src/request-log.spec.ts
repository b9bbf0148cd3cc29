import { Controller, Get, Logger, Module } from '@nestjs/common';
import { loadSettings } from '@tessera/settings';
import { makeTempDir } from '@tessera/testing';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { __resetOutOfContextForTests } from 'nestjs-pino/PinoLogger';
import { Writable } from 'node:stream';
import { createHttpEdge, version } from './host';
import { HostModule } from './host.module';

@Controller('probe')
class ProbeController {
  private readonly logger = new Logger('Probe');

  @Get('warn')
  warn(): { ok: true } {
    this.logger.warn('inside a request');
    return { ok: true };
  }

  @Get('debug')
  debug(): { ok: true } {
    this.logger.debug('below the level');
    return { ok: true };
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

/** A host with the probe routes whose log lines land in `lines`. */
function probedHost(env: Record<string, string>): { lines: Record<string, unknown>[]; url: () => string; app: () => NestFastifyApplication } {
  const dir = makeTempDir('tessera-request-log-');
  const lines: Record<string, unknown>[] = [];
  let app: NestFastifyApplication;
  let url: string;

  beforeAll(async () => {
    // nestjs-pino keeps the logger of lines logged outside a request per process: each host here gets its own.
    __resetOutOfContextForTests();
    const settings = loadSettings({ PORT: '0', TESSERA_DATA_DIR: dir.path, TESSERA_EXAMPLE_APP: '', LOG_LEVEL: 'warn', TESSERA_ADMIN_PASSWORD: 'request-log-password', ...env });
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    app = await createHttpEdge(HostModule.forRoot(settings, version, stream, { 'sync-service': ProbeModule }), settings);
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });

  afterAll(async () => {
    await app?.close();
    dir.remove();
  });
  return { lines, url: () => url, app: () => app };
}

// Lines logged while a request is handled name the request, as pino-http's request logger did, although
// the per-request logger is now made only when a line is written.
describe('the request logger of the HTTP edge, with request ids logged', () => {
  const { lines, url } = probedHost({ TESSERA_LOG_REQUEST_IDS: 'true' });

  it('gives each request its own reqId on the lines it logs, and writes nothing below the level', async () => {
    for (const path of ['warn', 'debug', 'warn']) expect((await fetch(`${url()}/probe/${path}`)).status).toBe(200);
    const probed = lines.filter((line) => line.context === 'Probe');
    expect(probed).toEqual([
      expect.objectContaining({ level: 40, msg: 'inside a request', reqId: expect.any(Number), service: 'tessera', version }),
      expect.objectContaining({ level: 40, msg: 'inside a request', reqId: expect.any(Number) }),
    ]);
    expect(probed[1].reqId).toBe((probed[0].reqId as number) + 2);
  });
});

// By default (below LOG_LEVEL debug) no request logger is bound: no AsyncLocalStorage is entered per request,
// so Node's promise hooks stay off, and the lines a request logs carry the process's fields only.
describe('the request logger of the HTTP edge, by default', () => {
  const { lines, url } = probedHost({});

  it('writes the lines a request logs without a reqId', async () => {
    for (const path of ['warn', 'debug']) expect((await fetch(`${url()}/probe/${path}`)).status).toBe(200);
    const probed = lines.filter((line) => line.context === 'Probe');
    expect(probed).toEqual([expect.objectContaining({ level: 40, msg: 'inside a request', service: 'tessera', version })]);
    expect(probed[0]).not.toHaveProperty('reqId');
  });
});
