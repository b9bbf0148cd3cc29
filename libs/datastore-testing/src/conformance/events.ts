/**
 * `expectEvents` of the unified test format, for command monitoring: the events a client entity observed
 * against the ones a case expects, in order, with the format's matching rules (a command or reply is a
 * root-level document, so fields the case does not name are allowed there and only there).
 */
import { deserialize, serialize } from 'bson';
import { type CommandFailedEvent, type CommandStartedEvent, type CommandSucceededEvent } from 'mongodb';
import { type Document, isPlainObject } from '@tessera/datastore';
import { match, type MatchContext } from './matching';

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

/**
 * The Node.js driver adds `wtimeout: 10000` to the write concern of every commitTransaction and abortTransaction it sends with
 * one (sessions.js: MongoDB's transactions spec asks for it on a retried commit only). That is the driver's
 * choice, not the server's, so it is left out where the case expects a write concern without it.
 */
function withoutDriverCommitTimeout(command: Document, expected: unknown): Document {
  const concern = command.writeConcern as Document | undefined;
  const wanted = isPlainObject(expected) ? (expected.writeConcern as Document | undefined) : undefined;
  if ((command.commitTransaction === undefined && command.abortTransaction === undefined) || !concern || concern.wtimeout !== 10000 || !isPlainObject(wanted) || 'wtimeout' in wanted) return command;
  const { wtimeout: _, ...rest } = concern;
  return { ...command, writeConcern: rest };
}

const WRITE_COMMANDS = new Set(['insert', 'update', 'delete', 'findAndModify', 'findandmodify']);

/** Why a write's `readConcern.afterClusterTime` is not checked (see withoutDriverWriteReadConcern). */
export const DRIVERS_3274 =
  'readConcern.afterClusterTime on writes outside a transaction: asked of drivers by DRIVERS-3274 (specifications commit 2a6fa8200), not yet sent by the Node.js driver 6.22';

/**
 * MongoDB's sessions spec now asks drivers to send `afterClusterTime` on writes in a causally consistent
 * session too (DRIVERS-3274); the Node.js driver 6.22 sends a read concern only on reads, so a write it
 * sent without one is not held against the server. Only that: a write that carries a read concern, and
 * every other expectation of the event, is still checked.
 */
function withoutDriverWriteReadConcern(command: Document, expected: unknown, note?: (reason: string) => void): unknown {
  if (!isPlainObject(expected) || !WRITE_COMMANDS.has(Object.keys(command)[0] ?? '') || command.autocommit !== undefined || command.readConcern !== undefined) return expected;
  const wanted = expected.readConcern;
  if (!isPlainObject(wanted) || !isPlainObject(wanted.afterClusterTime) || wanted.afterClusterTime.$$exists !== true) return expected;
  note?.(DRIVERS_3274);
  const { readConcern: _, ...rest } = expected;
  return rest;
}

function matchEvent(observed: ObservedEvent, expected: Document, path: string, context?: MatchContext, note?: (reason: string) => void): string | undefined {
  const [type, spec] = Object.entries(expected)[0] as [string, Document];
  if (observed.type !== type) return `${path}: expected ${type}, got ${describe(observed)}`;
  const event = observed.event as Partial<CommandStartedEvent & CommandSucceededEvent>;
  for (const [key, value] of Object.entries(spec ?? {})) {
    let problem: string | undefined;
    switch (key) {
      case 'command': {
        // As the server receives it: the driver hands sort and hint over as Maps, BSON makes them documents.
        const command = event.command ? withoutDriverCommitTimeout(deserialize(serialize(event.command)), value) : undefined;
        const wanted = command ? withoutDriverWriteReadConcern(command, value, note) : value;
        problem = match(command, wanted, true, `${path}.command`, context);
        break;
      }
      case 'reply':
        problem = match(event.reply, value, true, `${path}.reply`, context);
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
export function matchEvents(observed: ObservedEvent[] | undefined, expected: ExpectedEvents, context?: MatchContext, note?: (reason: string) => void): string | undefined {
  const where = `events of ${expected.client}`;
  if (expected.eventType !== undefined && expected.eventType !== 'command') return `${where}: event type ${expected.eventType} is not recorded`;
  if (!observed) return `${where}: no such client`;
  const tooFew = observed.length < expected.events.length;
  const tooMany = !expected.ignoreExtraEvents && observed.length > expected.events.length;
  if (tooFew || tooMany) return `${where}: expected ${expected.events.length} events, got ${observed.length}: ${observed.map(describe).join(', ')}`;
  for (const [i, event] of expected.events.entries()) {
    if (!isPlainObject(event)) return `${where}[${i}]: not an event`;
    const problem = matchEvent(observed[i], event, `${where}[${i}]`, context, note);
    if (problem) return problem;
  }
  return undefined;
}
