// A local SMTP server that keeps every message the app sends (password reset keys, webhook
// alerts), for the suites that read them.
import { SMTPServer } from "smtp-server";

export interface Delivered {
  to: string[];
  text: string;
}

export async function startInbox() {
  const messages: Delivered[] = [];
  const waiters: (() => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        messages.push({ to: session.envelope.rcptTo.map((r) => r.address), text: Buffer.concat(chunks).toString("utf8") });
        waiters.splice(0).forEach((w) => w());
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  return {
    /** Every message received, in order. */
    messages,
    /** The app's settings for sending here. */
    env: { CORPADMIN_SMTP_URL: `smtp://127.0.0.1:${port}`, CORPADMIN_SMTP_FROM: "noreply@corpadmin.test" },
    /** Waits for the n-th message (1-based), 10 s at most. */
    async message(n: number): Promise<Delivered> {
      const deadline = Date.now() + 10_000;
      while (messages.length < n) {
        if (Date.now() > deadline) throw new Error(`no mail #${n} within 10 s`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
      return messages[n - 1];
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
