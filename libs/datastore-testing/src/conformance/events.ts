/**
 * `expectEvents` of the unified test format, for command monitoring: the events a client entity observed
 * against the ones a case expects, in order, with the format's matching rules (a command or reply is a
 * root-level document, so fields the case does not name are allowed there and only there).
 */
import { deserialize, serialize } from 'bson';
import { type CommandFailedEvent, type CommandStartedEvent, type CommandSucceededEvent } from 'mongodb';
import { type Document, isPlainObject } from '@tessera/datastore';
import { match } from './matching';

export interface ObservedEvent {
  type: 'commandStartedEvent' | 'commandSucceededEvent' | 'commandFailedEvent';
  event: CommandStartedEvent | CommandSucceededEvent | CommandFailedEvent;
}

export interface ExpectedEvents {
  client: string;
  eventType?: string;
  ignoreExtraEvents?: boolean;
  events: Document[];
}

function describe(observed: ObservedEvent): string {
  return `${observed.type}(${observed.event.commandName})`;
}

function matchEvent(observed: ObservedEvent, expected: Document, path: string): string | undefined {
  const [type, spec] = Object.entries(expected)[0] as [string, Document];
  if (observed.type !== type) return `${path}: expected ${type}, got ${describe(observed)}`;
  const event = observed.event as Partial<CommandStartedEvent & CommandSucceededEvent>;
  for (const [key, value] of Object.entries(spec ?? {})) {
    let problem: string | undefined;
    switch (key) {
      case 'command':
        // As the server receives it: the driver hands sort and hint over as Maps, BSON makes them documents.
        problem = match(event.command ? deserialize(serialize(event.command)) : undefined, value, true, `${path}.command`);
        break;
      case 'reply':
        problem = match(event.reply, value, true, `${path}.reply`);
        break;
      case 'commandName':
      case 'databaseName':
        problem = event[key] === value ? undefined : `${path}.${key}: expected ${String(value)}, got ${String(event[key])}`;
        break;
      case 'hasServiceId':
        problem = (event.serviceId !== undefined) === value ? undefined : `${path}.hasServiceId: expected ${String(value)}`;
        break;
      case 'hasServerConnectionId':
        problem = (event.serverConnectionId !== undefined && event.serverConnectionId !== null) === value ? undefined : `${path}.hasServerConnectionId: expected ${String(value)}`;
        break;
      default:
        problem = `${path}: unsupported event field ${key}`;
    }
    if (problem) return problem;
  }
  return undefined;
}

/**
 * Checks one `expectEvents` entry against what its client observed; `undefined` when they agree, else the
 * first difference. Only command events are recorded, so an entry for another event type is reported.
 */
export function matchEvents(observed: ObservedEvent[] | undefined, expected: ExpectedEvents): string | undefined {
  const where = `events of ${expected.client}`;
  if (expected.eventType !== undefined && expected.eventType !== 'command') return `${where}: event type ${expected.eventType} is not recorded`;
  if (!observed) return `${where}: no such client`;
  const tooFew = observed.length < expected.events.length;
  const tooMany = !expected.ignoreExtraEvents && observed.length > expected.events.length;
  if (tooFew || tooMany) return `${where}: expected ${expected.events.length} events, got ${observed.length}: ${observed.map(describe).join(', ')}`;
  for (const [i, event] of expected.events.entries()) {
    if (!isPlainObject(event)) return `${where}[${i}]: not an event`;
    const problem = matchEvent(observed[i], event, `${where}[${i}]`);
    if (problem) return problem;
  }
  return undefined;
}
