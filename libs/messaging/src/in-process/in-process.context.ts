import { BaseRpcContext } from '@nestjs/microservices';
import { type MessageHeaderMap } from '@tessera/contracts';

/**
 * The Nest RPC context of a message delivered by the in-process bus: its subject, headers, and whether the
 * sender's facade already validated the payload (then the handler trusts it: it never left the process).
 */
export class InProcessContext extends BaseRpcContext<[string, MessageHeaderMap, boolean?]> {
  /** The command method Nest called for this message, with its controller (see `answeredBy`). */
  answeredBy: DirectCommandHandler | undefined;

  getSubject(): string {
    return this.args[0];
  }

  getHeaders(): MessageHeaderMap {
    return this.args[1];
  }

  isValidated(): boolean {
    return this.args[2] === true;
  }
}

/**
 * A `@CommandHandler` method as it is, with the controller Nest built: the in-process server calls it
 * directly once it has seen Nest call it, without Nest's per-call parameter pipes, guards, interceptors and
 * filters (a command handler validates, traces and maps its errors itself); one whose method or controller
 * names enhancers of its own stays with Nest.
 */
export interface DirectCommandHandler {
  method: (this: unknown, data: unknown, context: InProcessContext) => Promise<unknown>;
  controller: unknown;
}
