import { type MessageHeaderMap } from '@tessera/contracts';

/** One message as the bus delivers it: serialized like on a wire, so no object is shared between services. */
export interface BusDelivery {
  subject: string;
  /** The serialized packet (JSON text). */
  data: string;
  headers: MessageHeaderMap;
  /** Present on requests: sends one serialized reply packet back to the requester. */
  reply?: (data: string) => void;
  /**
   * Present on a request sent with `request`: the packet itself, this listener's own (nobody else holds it),
   * and the way to answer with a packet object. A listener that uses them skips the JSON round trip.
   */
  direct?: { packet: object; reply: (packet: object) => void };
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
    const targets = this.targetsOf(subject);
    const delivery: BusDelivery = reply ? { subject, data, headers: { ...headers }, reply } : { subject, data, headers: { ...headers } };
    for (const target of targets) setImmediate(() => target.listener(delivery));
    return targets.length;
  }

  /**
   * A request whose packet and replies stay objects: the command path of the in-process transport. Routing is
   * `publish`'s (same listeners, same round-robin, same asynchronous delivery). The sender gives up the packet
   * (it keeps no reference); a second listener gets a copy, and a listener reading `data` the JSON text, so
   * still no object is shared. Returns how many listeners will receive it.
   */
  request(subject: string, packet: object, headers: MessageHeaderMap, reply: (packet: object) => void): number {
    const targets = this.targetsOf(subject);
    let first = true;
    for (const target of targets) {
      const own: object = first ? packet : (JSON.parse(JSON.stringify(packet)) as object);
      first = false;
      const delivery: BusDelivery = {
        subject,
        get data() {
          return JSON.stringify(own);
        },
        headers: { ...headers },
        reply: (text: string) => reply(JSON.parse(text) as object),
        direct: { packet: own, reply },
      };
      setImmediate(() => target.listener(delivery));
    }
    return targets.length;
  }

  /** Number of listeners on `subject` (plain subscribers plus one per queue group). */
  interest(subject: string): number {
    const entry = this.subjects.get(subject);
    if (!entry) return 0;
    return entry.plain.length + [...entry.groups.values()].filter((group) => group.members.length > 0).length;
  }

  /** Who receives the next message on `subject`: every plain subscriber and the next member of each group. */
  private targetsOf(subject: string): Member[] {
    const entry = this.subjects.get(subject);
    if (!entry) return [];
    const targets: Member[] = [...entry.plain];
    for (const group of entry.groups.values()) {
      if (group.members.length === 0) continue;
      const index = group.next % group.members.length;
      group.next = index + 1;
      targets.push(group.members[index]);
    }
    return targets;
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
