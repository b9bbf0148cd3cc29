import { type MessageHeaderMap, MessageHeaders, RequestAbandonedSchema } from '@tessera/contracts';
import { Cancellation, type CancelSignal } from '@tessera/domain';

/**
 * The requests this process is handling, by call id, so that a caller who stops waiting (an
 * `messaging.request.abandoned` event, or the request's deadline passing) aborts the handler's signal.
 * One registry per process: call ids are random, and every transport server of the process feeds it.
 */
const handling = new Map<string, Cancellation>();

export interface HandledRequest {
  /** Aborted when the caller abandons the request or its deadline passes; `reason` says which. */
  readonly signal: CancelSignal;
  /** Call when the handler is done: forgets the request and its deadline timer. */
  done(): void;
}

/** Registers a request about to be handled; its signal aborts at the deadline or when the caller gives up. */
export function handleRequest(headers: MessageHeaderMap, deadline: number | undefined): HandledRequest {
  const controller = new Cancellation();
  const callId = headers[MessageHeaders.CallId];
  if (callId) handling.set(callId, controller);
  let timer: NodeJS.Timeout | undefined;
  if (deadline !== undefined) {
    const abortAtDeadline = (): void => controller.abort(new RequestAbandonment('deadline'));
    const remaining = deadline - Date.now();
    if (remaining <= 0) abortAtDeadline();
    else {
      timer = setTimeout(abortAtDeadline, Math.min(remaining, 2_147_483_647));
      timer.unref();
    }
  }
  return {
    signal: controller,
    done: () => {
      clearTimeout(timer);
      if (callId && handling.get(callId) === controller) handling.delete(callId);
    },
  };
}

/** Aborts the request `callId` if this process handles it; returns whether it did. */
export function abandonRequest(callId: string, reason: RequestAbandonment['reason'] = 'aborted'): boolean {
  const controller = handling.get(callId);
  if (!controller) return false;
  handling.delete(callId);
  controller.abort(new RequestAbandonment(reason));
  return true;
}

/** Reads an abandonment event as a transport delivers it (a Nest packet `{pattern, data}` as JSON text). */
export function abandonFromPacket(text: string): void {
  let packet: unknown;
  try {
    packet = JSON.parse(text);
  } catch {
    return;
  }
  const parsed = RequestAbandonedSchema.safeParse((packet as { data?: unknown } | null)?.data);
  if (parsed.success) abandonRequest(parsed.data.callId, parsed.data.reason);
}

/** The abort reason of a handler's signal. */
export class RequestAbandonment extends Error {
  constructor(readonly reason: 'aborted' | 'deadline') {
    super(reason === 'deadline' ? 'the caller stopped waiting: its deadline passed' : 'the caller abandoned the request');
    this.name = 'RequestAbandonment';
  }
}
