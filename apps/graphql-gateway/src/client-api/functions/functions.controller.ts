import { Controller, Get, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { EJSON } from 'bson';
import { clientGoneSignal, edgeMessageHeaders } from '@tessera/http-edge';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthService } from '../auth/auth.service';
import { ClientApiError, ClientApiErrorCode } from '../client-api.error';
import { fromEjson, toCanonical } from '../ejson-body';
import { FunctionsService, toFunctionCallRequest } from './functions.service';

/** `C/app/{app}/functions/call`: POST for calls, GET for the server-sent event stream of `watch` (§1.4). */
@Controller('api/client/v2.0/app/:appId/functions')
export class FunctionsController {
  constructor(
    private readonly auth: AuthService,
    private readonly functions: FunctionsService,
  ) {}

  // The app id, token and body are read from the request rather than by parameter decorators: Nest resolves
  // each decorated parameter through its own promises, a cost every call and remote data access paid.
  @Post('call')
  @HttpCode(200)
  async call(@Req() request: FastifyRequest<{ Params: { appId: string } }>, @Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const session = await this.auth.authenticate(request.headers.authorization, 'access', request.params.appId);
    const call = toFunctionCallRequest(fromEjson(request.body));
    // Only an app function's call goes over the bus and stops when the client leaves: a data-source action
    // (remote data access) runs here and uses neither, so their signal and headers are not made for it.
    const options = call.service === undefined ? { signal: clientGoneSignal(reply), headers: edgeMessageHeaders(request) } : {};
    const answer = await this.functions.call(session, call, requestMetadata(request), options);
    // Serialised here: Fastify would send a bare string result as text/plain.
    void reply.header('content-type', 'application/json');
    return JSON.stringify('ejson' in answer ? answer.ejson : toCanonical(answer.value ?? null));
  }

  @Get('call')
  async stream(
    @Param('appId') appId: string,
    @Headers('authorization') authorization: string | undefined,
    @Query('baas_request') encoded: string | undefined,
    @Query('baas_at') queryToken: string | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const session = await this.auth.authenticate(authorization, 'access', appId, queryToken);
    const call = toFunctionCallRequest(fromEjson(decodeBaasRequest(encoded)));
    const answer = await this.functions.call(session, call, requestMetadata(request), { headers: edgeMessageHeaders(request) });
    const result = 'value' in answer ? answer.value : undefined;
    if (!isAsyncIterable(result)) throw new ClientApiError(ClientApiErrorCode.BadRequest, `'${call.name}' does not stream; call it with POST`);
    await sendEventStream(reply, result, reply.getHeaders());
  }
}

function requestMetadata(request: FastifyRequest): { remoteIpAddress: string; httpMethod: string; httpUserAgent?: string; rawQueryString: string } {
  const userAgent = request.headers['user-agent'];
  const query = request.url.indexOf('?');
  return { remoteIpAddress: request.ip, httpMethod: request.method, ...(userAgent ? { httpUserAgent: userAgent } : {}), rawQueryString: query >= 0 ? request.url.slice(query + 1) : '' };
}

function decodeBaasRequest(encoded: string | undefined): unknown {
  if (!encoded) throw new ClientApiError(ClientApiErrorCode.MissingParameter, "'baas_request' is required");
  try {
    return JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
  } catch {
    throw new ClientApiError(ClientApiErrorCode.BadRequest, "'baas_request' must be base64-encoded JSON");
  }
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/** Only `%`, CR and LF are escaped inside `data:`; the clients decode exactly these three. */
function escapeEventData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\n/g, '%0A').replace(/\r/g, '%0D');
}

/** Streams change events as `data: <canonical EJSON>` until the client leaves; a failure ends with `event: error`. */
async function sendEventStream(reply: FastifyReply, events: AsyncIterable<unknown>, headers: Record<string, unknown>): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  const passOn = Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase().startsWith('access-control-') || name.toLowerCase() === 'vary')) as Record<string, string>;
  raw.writeHead(200, { ...passOn, 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  raw.write(':\n\n');
  const iterator = events[Symbol.asyncIterator]();
  const closed = new Promise<'closed'>((resolve) => raw.once('close', () => resolve('closed')));
  try {
    for (;;) {
      const pending = iterator.next();
      // When the client leaves first, closing the feed may reject this read: nobody waits for it then.
      pending.catch(() => undefined);
      const next = await Promise.race([pending, closed]);
      if (next === 'closed' || next.done) break;
      raw.write(`data: ${escapeEventData(EJSON.stringify(next.value, { relaxed: false }))}\n\n`);
    }
  } catch (error) {
    const body = error instanceof ClientApiError || (error instanceof Error && 'errorCode' in error) ? { error: error.message, error_code: String((error as { errorCode: unknown }).errorCode) } : { error: 'internal server error', error_code: 'InternalServerError' };
    if (!raw.destroyed) raw.write(`event: error\ndata: ${escapeEventData(JSON.stringify(body))}\n\n`);
  } finally {
    await iterator.return?.();
    if (!raw.destroyed) raw.end();
  }
}
