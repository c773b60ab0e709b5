// The node's two keys, which no database ever holds: the token signing key (HS256) and the data
// key (NAS secrets are sealed with it, lib/secret-box.ts; it exists so that a copy of the
// database alone does not reveal them). In cluster mode every app node must hold the same two
// keys, else nodes reject each other's tokens and cannot open each other's sealed secrets. So a
// node records a fingerprint of each (an HMAC of a fixed label under the key, which does not
// reveal the key) in the platform's settings, the first node to start recording it, and a node
// whose key's fingerprint differs refuses to start, naming where its key comes from.
import { createHmac, randomBytes } from "node:crypto";
import { join } from "node:path";
import { ConfigError, type Config } from "../config";
import { ensureKeyFile } from "../lib/key-file";
import { readDataKey } from "../lib/secret-box";
import type { PlatformDoor } from "./store";
import { getSetting, putSetting } from "./settings";

/** The HS256 key: from configuration, else generated once into DATA_DIR/secret.key (mode 0600). */
export function tokenKey(config: Config, narrow = true): { key: Uint8Array; source: string } {
  if (config.tokenSecret) return { key: new TextEncoder().encode(config.tokenSecret), source: "--token-secret / CORPADMIN_TOKEN_SECRET" };
  const path = join(config.dataDir, "secret.key");
  return { key: new TextEncoder().encode(ensureKeyFile(path, () => randomBytes(48).toString("base64url"), narrow)), source: path };
}

/** HMAC-SHA256 of a fixed label under the key, hex: equal keys give equal fingerprints, and it reveals nothing of the key. */
export function keyFingerprint(key: Uint8Array, label: string): string {
  return createHmac("sha256", key).update(`corpadmin key fingerprint v1: ${label}`).digest("hex");
}

const SETTING_PREFIX = "keys:fingerprint:";

/** A configuration error: `corpadmin serve` prints the message alone and exits with 2. */
export class KeyMismatch extends ConfigError {}

/**
 * Records each key's fingerprint when none is recorded yet, and throws KeyMismatch when one is
 * and differs. One transaction on the platform door: on PostgreSQL its writer lock is one across
 * nodes, so of two nodes starting at once with different keys the second refuses.
 */
export async function checkSharedKeys(platform: PlatformDoor, config: Config): Promise<void> {
  const keys = [
    { label: "token", what: "token signing key", ...tokenKey(config) },
    { label: "data", what: "data key (NAS secrets are sealed with it)", ...readDataKey(config.dataDir, config.dataKeyFile) },
  ];
  const differing = await platform.write(async (tx) => {
    const wrong: typeof keys = [];
    for (const k of keys) {
      const mine = keyFingerprint(k.key, k.label);
      const recorded = await getSetting(tx, SETTING_PREFIX + k.label);
      if (recorded === null) await putSetting(tx, SETTING_PREFIX + k.label, mine);
      else if (recorded !== mine) wrong.push(k);
    }
    return wrong;
  });
  if (differing.length) {
    throw new KeyMismatch(
      differing
        .map((k) => `this node's ${k.what} (from ${k.source}) is not the one the other nodes of this database use: give every app node the same key (copy it from a running node)`)
        .join("; "),
    );
  }
}
