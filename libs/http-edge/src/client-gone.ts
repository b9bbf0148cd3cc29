import type { ServerResponse } from 'node:http';
import { Cancellation, type CancelSignal } from '@tessera/domain';

/**
 * A signal that aborts when the HTTP client goes away before its response is sent (it disconnected,
 * or its connection broke), so work done only for it can stop: a function call is then terminated and its
 * sandbox freed. A response that was sent never aborts the signal.
 */
export function clientGoneSignal(reply: { raw: ServerResponse }): CancelSignal {
  const controller = new Cancellation();
  const response = reply.raw;
  const onClose = (): void => {
    if (!response.writableFinished) controller.abort(new Error('the HTTP client went away before the response was sent'));
  };
  // The response closes when it is sent or when the connection goes; only the second counts. (The request
  // stream is no witness: it is destroyed as soon as its body has been read.)
  response.once('close', onClose);
  if (response.destroyed) onClose();
  return controller;
}
