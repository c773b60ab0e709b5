// A key generated once into a file of the data directory (the token key, the data key): the first
// process to start writes it, exclusively, and every later one, or a racing one, reads that.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";

/** The file's text, trimmed; when missing, `generate()` is written to it first (mode 0600). */
export function ensureKeyFile(path: string, generate: () => string, narrow = true): string {
  if (!existsSync(path)) {
    try {
      writeFileSync(path, generate() + "\n", { mode: 0o600, flag: "wx" });
    } catch (err) {
      // Another process created it meanwhile: use theirs.
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  // A key file left readable by others (copied in by hand) is narrowed again.
  // (`narrow` false: corpadmin doctor, which reports the mode and changes it only with --fix.)
  if (narrow) chmodSync(path, 0o600);
  return readFileSync(path, "utf8").trim();
}
