import { type MessageHeaderMap } from '@tessera/contracts';

/** One message as the bus delivers it: serialized like on a wire, so no object is shared between services. */
export interface BusDelivery {
  subject: string;
  /** The serialized packet (JSON text). */
  data: string;
  headers: MessageHeaderMap;
  /** Present on requests: sends one serialized reply packet back to the requester. */
  reply?: (data: string) => void;
}

export type BusListener = (delivery: BusDelivery) => void;

interface Member {
  listener: BusListener;
}

interface Group {
  members: Member[];
  next: number;
}

/**
 * The process-wide message bus of standalone mode, with NATS core semantics on exact subjects: a message goes
 * to every plain subscriber and to one member of every queue group (round-robin), asynchronously; a request
 * published where nobody listens reports zero deliveries so the caller fails fast. Services in one process
 * share `InProcessBus.shared()`; tests make their own.
 */
export class InProcessBus {
  private static sharedInstance: InProcessBus | undefined;
  private readonly subjects = new Map<string, { plain: Member[]; groups: Map<string, Group> }>();

  /** The bus every in-process transport uses unless given another one. */
  static shared(): InProcessBus {
    InProcessBus.sharedInstance ??= new InProcessBus();
    return InProcessBus.sharedInstance;
  }

  /** Listens on `subject`, alone or as one member of queue group `queue`; returns the unsubscribe function. */
  subscribe(subject: string, listener: BusListener, options: { queue?: string } = {}): () => void {
    let entry = this.subjects.get(subject);
    if (!entry) {
      entry = { plain: [], groups: new Map() };
      this.subjects.set(subject, entry);
    }
    const member: Member = { listener };
    const { queue } = options;
    if (queue === undefined || queue === '') {
      entry.plain.push(member);
    } else {
      let group = entry.groups.get(queue);
      if (!group) {
        group = { members: [], next: 0 };
        entry.groups.set(queue, group);
      }
      group.members.push(member);
    }
    return () => this.unsubscribe(subject, member, queue);
  }

  /** Delivers to the current listeners; returns how many will receive it (0: nobody listens). */
  publish(subject: string, data: string, headers: MessageHeaderMap, reply?: (data: string) => void): number {
    const entry = this.subjects.get(subject);
    if (!entry) return 0;
    const targets: Member[] = [...entry.plain];
    for (const group of entry.groups.values()) {
      if (group.members.length === 0) continue;
      const index = group.next % group.members.length;
      group.next = index + 1;
      targets.push(group.members[index]);
    }
    const delivery: BusDelivery = reply ? { subject, data, headers: { ...headers }, reply } : { subject, data, headers: { ...headers } };
    for (const target of targets) setImmediate(() => target.listener(delivery));
    return targets.length;
  }

  /** Number of listeners on `subject` (plain subscribers plus one per queue group). */
  interest(subject: string): number {
    const entry = this.subjects.get(subject);
    if (!entry) return 0;
    return entry.plain.length + [...entry.groups.values()].filter((group) => group.members.length > 0).length;
  }

  private unsubscribe(subject: string, member: Member, queue: string | undefined): void {
    const entry = this.subjects.get(subject);
    if (!entry) return;
    if (queue === undefined || queue === '') {
      entry.plain = entry.plain.filter((candidate) => candidate !== member);
    } else {
      const group = entry.groups.get(queue);
      if (group) {
        group.members = group.members.filter((candidate) => candidate !== member);
        if (group.members.length === 0) entry.groups.delete(queue);
      }
    }
    if (entry.plain.length === 0 && entry.groups.size === 0) this.subjects.delete(subject);
  }
}
