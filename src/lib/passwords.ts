// argon2id at OWASP's minimum (19 MiB, t=2): ≈ 30 ms a verify here. Each hash holds its memory
// for that long, so a semaphore bounds how many run at once and logins cannot exhaust memory.

const PARAMS = { algorithm: "argon2id", memoryCost: 19456, timeCost: 2 } as const;

export class PasswordHasher {
  private running = 0;
  private waiting: (() => void)[] = [];
  private dummy: Promise<string> | null = null;

  constructor(private maxConcurrent: number) {}

  private async slot<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.maxConcurrent) await new Promise<void>((r) => this.waiting.push(r));
    this.running++;
    try {
      return await fn();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  hash(password: string): Promise<string> {
    return this.slot(() => Bun.password.hash(password, PARAMS));
  }

  verify(password: string, hash: string): Promise<boolean> {
    return this.slot(() => Bun.password.verify(password, hash).catch(() => false));
  }

  /** Spends the same time as a real verify, for logins that do not exist (no timing oracle). */
  async verifyDummy(password: string): Promise<false> {
    this.dummy ??= Bun.password.hash("corpadmin-dummy-password", PARAMS);
    await this.verify(password, await this.dummy);
    return false;
  }

  /** True when the stored hash was made with weaker or other parameters than today's. */
  needsRehash(hash: string): boolean {
    return !hash.startsWith(`$argon2id$v=19$m=${PARAMS.memoryCost},t=${PARAMS.timeCost},`);
  }
}
