// Outgoing e-mail through the configured SMTP server (nodemailer). Without SMTP configured the
// message is logged at warn level for the operator instead, and the caller's answer is the same.
import nodemailer from "nodemailer";
import type { Logger } from "./log";

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export class Mailer {
  private transport: ReturnType<typeof nodemailer.createTransport> | null;

  constructor(
    smtpUrl: string | null,
    private from: string,
    private logger: Logger,
  ) {
    this.transport = smtpUrl ? nodemailer.createTransport(smtpUrl) : null;
  }

  get configured(): boolean {
    return this.transport !== null;
  }

  /** Sends; never throws (a mail failure must not fail the request that caused it). */
  async send(mail: Mail): Promise<boolean> {
    if (!this.transport) {
      this.logger.warn("e-mail not sent: no SMTP server configured", { to: mail.to, subject: mail.subject, text: mail.text });
      return false;
    }
    try {
      await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
      return true;
    } catch (err) {
      this.logger.error("e-mail failed", { to: mail.to, subject: mail.subject, error: String(err) });
      return false;
    }
  }

  close(): void {
    this.transport?.close();
  }
}
