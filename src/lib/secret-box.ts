// Secrets the service must use in clear later (a NAS's RADIUS shared secret, to sign RFC 5176
// requests), kept encrypted at rest: AES-256-GCM under a data key generated once into
// DATA_DIR/data.key (mode 0600, like the token key). A copy of a database alone does not reveal
// them; the key file must be backed up with the data directory.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { join } from "node:path";

const VERSION = "v1";

export class SecretBox {
  private constructor(private key: Buffer) {}

  /** The box of DATA_DIR/data.key, creating the key on first use. */
  static forDataDir(dataDir: string): SecretBox {
    const path = join(dataDir, "data.key");
    if (!existsSync(path)) {
      try {
        writeFileSync(path, randomBytes(32).toString("base64") + "\n", { mode: 0o600, flag: "wx" });
      } catch (err) {
        // Another process created it meanwhile: use theirs.
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
    }
    chmodSync(path, 0o600);
    const key = Buffer.from(readFileSync(path, "utf8").trim(), "base64");
    if (key.length !== 32) throw new Error(`${path} does not hold a 32-byte base64 key`);
    return new SecretBox(key);
  }

  /** `v1:<base64 iv ‖ tag ‖ ciphertext>`; `context` (e.g. the row's purpose) must match when opening. */
  seal(plain: string, context: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv("aes-256-gcm", this.key, iv);
    c.setAAD(Buffer.from(context, "utf8"));
    const body = Buffer.concat([c.update(plain, "utf8"), c.final()]);
    return `${VERSION}:${Buffer.concat([iv, c.getAuthTag(), body]).toString("base64")}`;
  }

  /** The plain text, or null when the value was sealed under another key or context, or altered. */
  open(sealed: string, context: string): string | null {
    if (!sealed.startsWith(`${VERSION}:`)) return null;
    const raw = Buffer.from(sealed.slice(VERSION.length + 1), "base64");
    if (raw.length < 28) return null;
    try {
      const d = createDecipheriv("aes-256-gcm", this.key, raw.subarray(0, 12));
      d.setAAD(Buffer.from(context, "utf8"));
      d.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString("utf8");
    } catch {
      return null;
    }
  }
}
