// Outgoing e-mail through the configured SMTP server (nodemailer). Without SMTP configured the
// message is logged at warn level for the operator instead, and the caller's answer is the same.
// nodemailer is loaded on the first message only: it costs ≈ 15 MB of resident memory, which a
// service that never sends mail (no SMTP configured) should not carry.
import type { Transporter } from "nodemailer";
import type { Logger } from "./log";

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export class Mailer {
  private transport: Promise<Transporter> | null = null;
  private closed = false;

  constructor(
    private smtpUrl: string | null,
    private from: string,
    private logger: Logger,
  ) {}

  get configured(): boolean {
    return this.smtpUrl !== null;
  }

  private connect(url: string): Promise<Transporter> {
    this.transport ??= import("nodemailer").then((m) => m.default.createTransport(url));
    return this.transport;
  }

  /** Sends; never throws (a mail failure must not fail the request that caused it). */
  async send(mail: Mail): Promise<boolean> {
    if (this.smtpUrl === null) {
      this.logger.warn("e-mail not sent: no SMTP server configured", { to: mail.to, subject: mail.subject, text: mail.text });
      return false;
    }
    if (this.closed) {
      this.logger.error("e-mail not sent: shutting down", { to: mail.to, subject: mail.subject });
      return false;
    }
    try {
      const transport = await this.connect(this.smtpUrl);
      await transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
      return true;
    } catch (err) {
      this.logger.error("e-mail failed", { to: mail.to, subject: mail.subject, error: String(err) });
      return false;
    }
  }

  close(): void {
    this.closed = true;
    this.transport?.then((t) => t.close(), () => {});
  }
}
