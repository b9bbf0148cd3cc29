import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger, NotFoundException } from '@nestjs/common';
import { isTesseraError, type ErrorBody } from '@tessera/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BaseRpcExceptionFilter } from '@nestjs/microservices';
import { type Observable, throwError } from 'rxjs';
import { correlationIdOf } from './correlation';
import { allowedMethods } from './edge-errors';

const statusCodes: Record<number, string> = {
  400: 'BadRequest',
  401: 'InvalidSession',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  408: 'RequestTimeout',
  413: 'RequestTooLarge',
  415: 'BadRequest',
  431: 'RequestHeaderFieldsTooLarge',
  429: 'TooManyRequests',
};

/**
 * Maps every error thrown by an HTTP handler to App Services' wire form: the right status, the body
 * `{ error, error_code }` and `Content-Type` exactly `application/json` (realm-core parses error bodies
 * only then). Errors we did not expect are logged with a correlation id and answered with a generic
 * message: no stack trace or internal detail reaches the client.
 */
const rpcFilter = new BaseRpcExceptionFilter();

@Catch()
export class AppServicesExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpEdge');

  catch(exception: unknown, host: ArgumentsHost): Observable<never> | undefined {
    // A message handler of the same app (the host connects its transport with the app's config) answers as
    // Nest's own RPC filter would: an RpcException's error body, or a generic one. Handed on as it was, the
    // exception reached the caller as a transport failure, its error code lost.
    if (host.getType() === 'rpc') return rpcFilter.catch(exception, host) as Observable<never>;
    if (host.getType() !== 'http') return throwError(() => exception);
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    // No route for the path and method: a 405 (with the methods the path serves) when the path is known.
    if (exception instanceof NotFoundException && !reply.sent) {
      const allowed = allowedMethods(request.server, request.url);
      if (allowed.length > 0 && !allowed.includes(request.method)) {
        const body: ErrorBody = { error: `method ${request.method} not allowed on ${request.url.split('?')[0] ?? request.url}`, error_code: 'MethodNotAllowed' };
        void reply.status(405).header('allow', allowed.join(', ')).header('content-type', 'application/json').send(JSON.stringify(body));
        return undefined;
      }
    }
    const { status, body } = this.toWire(exception, request);
    void reply.status(status).header('content-type', 'application/json').send(JSON.stringify(body));
    return undefined;
  }

  private toWire(exception: unknown, request: FastifyRequest): { status: number; body: ErrorBody } {
    if (isTesseraError(exception)) return { status: exception.httpStatus, body: exception.toBody() };
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status < 500) {
        const response = exception.getResponse();
        const message = typeof response === 'string' ? response : messageOf(response) ?? exception.message;
        return { status, body: { error: message, error_code: statusCodes[status] ?? 'BadRequest' } };
      }
    }
    const fastifyError = exception as { statusCode?: unknown; code?: unknown; message?: unknown };
    if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
      const status = fastifyError.statusCode;
      const message = fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fastifyError.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'invalid JSON in request body' : typeof fastifyError.message === 'string' ? fastifyError.message : 'bad request';
      return { status, body: { error: message, error_code: statusCodes[status] ?? 'BadRequest' } };
    }
    const correlationId = correlationIdOf(request);
    this.logger.error({ err: exception, correlationId, method: request.method, url: request.url }, 'unhandled error');
    return { status: 500, body: { error: `internal server error (correlation id ${correlationId})`, error_code: 'InternalServerError' } };
  }
}

function messageOf(response: object): string | undefined {
  const message = (response as { message?: unknown }).message;
  if (typeof message === 'string') return message;
  if (Array.isArray(message)) return message.join('; ');
  return undefined;
}
