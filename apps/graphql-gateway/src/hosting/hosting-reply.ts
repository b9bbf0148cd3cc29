import type { FastifyReply } from 'fastify';
import type { HostingAnswer } from './hosting.service';

/** Writes a hosting answer (the controller's and the domain hook's alike). */
export function sendHostingAnswer(reply: FastifyReply, answer: HostingAnswer): FastifyReply {
  void reply.code(answer.status).headers(answer.headers);
  return reply.send(answer.body);
}

/** The path and the query (with its `?`) of a request URL, as sent. */
export function splitUrl(url: string): { path: string; query: string } {
  const at = url.indexOf('?');
  return at < 0 ? { path: url, query: '' } : { path: url.slice(0, at), query: url.slice(at) };
}
