import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Injectable, Logger } from '@nestjs/common';

/** A message the email/password provider would send: confirmation and password-reset links. */
export interface OutgoingMail {
  appId: string;
  to: string;
  purpose: 'confirm' | 'reset';
  token: string;
  tokenId: string;
  /** The link built from the provider's emailConfirmationUrl or resetPasswordUrl, when it has one. */
  link?: string;
  sentAt: string;
}

/** Where the email/password provider sends its mail. Replace it to deliver real email. */
export abstract class Mailer {
  abstract send(mail: OutgoingMail): Promise<void>;
}

/**
 * There is no mail server: each message is logged (without its token) and appended with its token to
 * `<dataDir>/platform/mail/outbox.jsonl`, where an operator or a test can read it.
 */
@Injectable()
export class OutboxFileMailer extends Mailer {
  private readonly logger = new Logger('Mailer');

  constructor(private readonly dataDir: string) {
    super();
  }

  static outboxPath(dataDir: string): string {
    return join(dataDir, 'platform', 'mail', 'outbox.jsonl');
  }

  async send(mail: OutgoingMail): Promise<void> {
    const path = OutboxFileMailer.outboxPath(this.dataDir);
    // The owner's alone, as everything under the data directory: mail carries confirmation tokens.
    await mkdir(join(this.dataDir, 'platform', 'mail'), { recursive: true, mode: 0o700 });
    await appendFile(path, `${JSON.stringify(mail)}\n`, { mode: 0o600 });
    this.logger.log(`${mail.purpose} email for ${mail.to} (app ${mail.appId}) written to ${path}`);
  }

  /** Every message sent so far (tests and operators). */
  static async read(dataDir: string): Promise<OutgoingMail[]> {
    try {
      const text = await readFile(OutboxFileMailer.outboxPath(dataDir), 'utf8');
      return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as OutgoingMail);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }
}
