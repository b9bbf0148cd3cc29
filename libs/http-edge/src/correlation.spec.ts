import { MessageHeaders } from '@tessera/contracts';
import { correlationIdOf, edgeMessageHeaders } from './correlation';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('the correlation id and trace context a request carries over the bus', () => {
  it("takes a proxy's plain x-request-id and keeps one id for the whole request", () => {
    const request = { headers: { 'x-request-id': 'req-42.a:b' } };
    expect(correlationIdOf(request)).toBe('req-42.a:b');
    expect(edgeMessageHeaders(request)[MessageHeaders.CorrelationId]).toBe('req-42.a:b');
    const anonymous = { headers: {} };
    expect(correlationIdOf(anonymous)).toMatch(uuid);
    expect(correlationIdOf(anonymous)).toBe(correlationIdOf(anonymous));
  });

  it('replaces an x-request-id that is too long, holds spaces or control characters, or is empty', () => {
    for (const hostile of ['x'.repeat(129), 'a b', 'line\nbreak', 'tab\there', '', '<script>']) {
      expect(correlationIdOf({ headers: { 'x-request-id': hostile } })).toMatch(uuid);
    }
    expect(correlationIdOf({ headers: { 'x-request-id': ['first-id', 'second'] } })).toBe('first-id');
  });

  it('passes on only a well-formed traceparent, and a tracestate of sane length beside it', () => {
    expect(edgeMessageHeaders({ headers: { traceparent, tracestate: 'vendor=abc' } })).toMatchObject({ traceparent, tracestate: 'vendor=abc' });
    for (const bad of ['00-xyz-00f067aa0ba902b7-01', `${traceparent}-extra`, 'x'.repeat(10_000)]) {
      const headers = edgeMessageHeaders({ headers: { traceparent: bad, tracestate: 'vendor=abc' } });
      expect(headers).not.toHaveProperty('traceparent');
      expect(headers).not.toHaveProperty('tracestate');
    }
    expect(edgeMessageHeaders({ headers: { traceparent, tracestate: 'v='.padEnd(513, 'x') } })).not.toHaveProperty('tracestate');
  });
});
