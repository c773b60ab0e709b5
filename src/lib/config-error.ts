/** A setting that cannot be used: main prints the message and exits 2 (src/config.ts re-exports it). */
export class ConfigError extends Error {}
