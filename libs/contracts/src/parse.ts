import { type z } from 'zod';
import { InvalidPayloadError, type PayloadIssue, type PayloadPart, UnknownSubjectError } from './errors';
import { exactShapeCheck } from './exact-shape';
import {
  type CommandContract,
  type CommandRequest,
  type CommandResponse,
  type CommandSubject,
  type EventContract,
  type EventPayload,
  type EventSubject,
  getContract,
} from './registry';

/** The command contract of `subject`; throws UnknownSubjectError when it has none (or is an event). */
export function commandContract(subject: string): CommandContract {
  const contract = getContract(subject);
  if (contract?.kind !== 'command') throw new UnknownSubjectError(subject, 'command');
  return contract;
}

/** The event contract of `subject`; throws UnknownSubjectError when it has none (or is a command). */
export function eventContract(subject: string): EventContract {
  const contract = getContract(subject);
  if (contract?.kind !== 'event') throw new UnknownSubjectError(subject, 'event');
  return contract;
}

/** Validates a command request against its contract; throws InvalidPayloadError listing every issue. */
export function parseCommandRequest<S extends CommandSubject>(subject: S, data: unknown): CommandRequest<S> {
  return parseWith(commandContract(subject).request, subject, 'request', data) as CommandRequest<S>;
}

/** Validates a command response against its contract; throws InvalidPayloadError listing every issue. */
export function parseCommandResponse<S extends CommandSubject>(subject: S, data: unknown): CommandResponse<S> {
  return parseWith(commandContract(subject).response, subject, 'response', data) as CommandResponse<S>;
}

/** Validates an event payload against its contract; throws InvalidPayloadError listing every issue. */
export function parseEventPayload<S extends EventSubject>(subject: S, data: unknown): EventPayload<S> {
  return parseWith(eventContract(subject).payload, subject, 'event', data) as EventPayload<S>;
}

function parseWith(schema: z.ZodTypeAny, subject: string, part: PayloadPart, data: unknown): unknown {
  // A payload already of exactly the contract's shape is what zod would answer: passed on as it is.
  if (exactShapeCheck(schema)(data)) return data;
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  throw new InvalidPayloadError(subject, part, toIssues(result.error));
}

function toIssues(error: z.ZodError): PayloadIssue[] {
  return error.issues.map((issue) => ({ path: issue.path.length === 0 ? '(root)' : issue.path.join('.'), message: issue.message }));
}
