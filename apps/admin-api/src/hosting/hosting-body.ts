import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { HOSTING_LIMITS } from '@tessera/app-config';
import type { FastifyInstance } from 'fastify';

/** Room for the `meta` part and the delimiters around a file of the largest size allowed. */
const multipartOverhead = 64 * 1024;

/**
 * Lets the hosting upload receive realm-cli's multipart body as raw bytes, up to App Services' 25 MB
 * file limit (above the edge's 18 MB default for other bodies); a larger body is refused with 413 before
 * it is buffered whole.
 */
@Injectable()
export class HostingBodyParser implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    for (const type of ['multipart/mixed', 'multipart/form-data']) {
      if (fastify.hasContentTypeParser(type)) continue;
      fastify.addContentTypeParser(type, { parseAs: 'buffer', bodyLimit: HOSTING_LIMITS.fileBytes + multipartOverhead }, (_request, body, done) => done(null, body));
    }
  }
}
