import { BaseRpcContext } from '@nestjs/microservices';
import { type MessageHeaderMap } from '@tessera/contracts';

/**
 * The Nest RPC context of a message delivered by the in-process bus: its subject, headers, and whether the
 * sender's facade already validated the payload (then the handler trusts it: it never left the process).
 */
export class InProcessContext extends BaseRpcContext<[string, MessageHeaderMap, boolean?]> {
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
