import { TesseraError } from '@tessera/domain';

export enum ContractErrorCode {
  InvalidPayload = 'InvalidPayload',
  UnknownSubject = 'UnknownSubject',
}

export type PayloadPart = 'request' | 'response' | 'event';

export interface PayloadIssue {
  /** Dotted path of the offending field, `(root)` for the payload itself. */
  path: string;
  message: string;
}

/**
 * A payload does not match its subject's contract. Thrown by the parse helpers on the sending side (a bug in
 * the sender) and on the receiving side (a sender on another version, or a bug); between services it is an
 * internal error, hence 500.
 */
export class InvalidPayloadError extends TesseraError {
  readonly errorCode = ContractErrorCode.InvalidPayload;
  readonly httpStatus = 500;

  constructor(
    readonly subject: string,
    readonly part: PayloadPart,
    readonly issues: readonly PayloadIssue[],
  ) {
    super(`invalid ${part} payload for ${subject}: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`);
  }
}

/** A subject with no contract, or a command subject used as an event (or the reverse). */
export class UnknownSubjectError extends TesseraError {
  readonly errorCode = ContractErrorCode.UnknownSubject;
  readonly httpStatus = 500;

  constructor(
    readonly subject: string,
    expected: 'command' | 'event' | 'any',
  ) {
    super(expected === 'any' ? `no contract for subject ${subject}` : `no ${expected} contract for subject ${subject}`);
  }
}
