import { Controller, Get, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ConsoleFiles, consoleSecurityHeaders } from './console-files';

/**
 * `/console`: the admin console's static files (apps/console), with no authentication of their own: the
 * page signs in to the admin API and every call it makes is the admin API's, under the same guard.
 */
@Controller('console')
export class ConsoleController {
  constructor(private readonly files: ConsoleFiles) {}

  @Get()
  page(@Res() reply: FastifyReply): FastifyReply {
    return this.send(reply, 'index.html');
  }

  @Get('*')
  file(@Req() request: FastifyRequest, @Res() reply: FastifyReply): FastifyReply {
    // The raw path, still percent-encoded: a name matches only when it is exactly one the build wrote.
    const path = request.url.split('?')[0].slice('/console/'.length);
    return this.send(reply, path === '' ? 'index.html' : path);
  }

  private send(reply: FastifyReply, name: string): FastifyReply {
    const file = this.files.get(name);
    if (file) return reply.code(200).headers(file.headers).send(file.body);
    const missing = this.files.get('index.html') === undefined;
    const body = missing
      ? { error: 'the admin console is not built: run `npm run build`', error_code: 'ConsoleNotBuilt' }
      : { error: `no console file '${name.slice(0, 200)}'`, error_code: 'NotFound' };
    return reply.code(404).headers(consoleSecurityHeaders).header('content-type', 'application/json').send(JSON.stringify(body));
  }
}
