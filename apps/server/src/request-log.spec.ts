import { Controller, Get, Logger, Module } from '@nestjs/common';
import { loadSettings } from '@tessera/settings';
import { makeTempDir } from '@tessera/testing';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
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

// Lines logged while a request is handled name the request, as pino-http's request logger did, although
// the per-request logger is now made only when a line is written.
describe('the request logger of the HTTP edge', () => {
  const dir = makeTempDir('tessera-request-log-');
  const lines: Record<string, unknown>[] = [];
  let app: NestFastifyApplication;
  let url: string;

  beforeAll(async () => {
    const settings = loadSettings({ PORT: '0', TESSERA_DATA_DIR: dir.path, TESSERA_EXAMPLE_APP: '', LOG_LEVEL: 'warn', TESSERA_ADMIN_PASSWORD: 'request-log-password' });
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

  it('gives each request its own reqId on the lines it logs, and writes nothing below the level', async () => {
    for (const path of ['warn', 'debug', 'warn']) expect((await fetch(`${url}/probe/${path}`)).status).toBe(200);
    const probed = lines.filter((line) => line.context === 'Probe');
    expect(probed).toEqual([
      expect.objectContaining({ level: 40, msg: 'inside a request', reqId: expect.any(Number), service: 'tessera', version }),
      expect.objectContaining({ level: 40, msg: 'inside a request', reqId: expect.any(Number) }),
    ]);
    expect(probed[1].reqId).toBe((probed[0].reqId as number) + 2);
  });
});
