import { BaseRpcContext } from '@nestjs/microservices';
import { type MessageHeaderMap } from '@tessera/contracts';

/** The Nest RPC context of a message delivered by the in-process bus: its subject and headers. */
export class InProcessContext extends BaseRpcContext<[string, MessageHeaderMap]> {
  getSubject(): string {
    return this.args[0];
  }

  getHeaders(): MessageHeaderMap {
    return this.args[1];
  }
}
