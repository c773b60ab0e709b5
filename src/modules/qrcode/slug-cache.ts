// The redirect's cache of slugs: GET /q/{slug} is the hottest public path, and a cached slug is
// answered without a database read or an await. A miss reads the platform slug index, then the
// corporation's code row, through the store's read connections. Every committed change to a code
// or to the index publishes SLUG_TOPIC with the slug (codes-service.ts, through `ctx.changes`),
// which makes this cache forget it on every node; a resync forgets every slug.
import type { AppContext } from "../../core/context";
import { redirectRow, slugIndexEntry, SLUG_TOPIC } from "./codes-service";

export interface SlugEntry {
  corpId: string;
  codeId: string;
  target: string;
  active: boolean;
}

/** Entries kept (unknown slugs included, as null); past it the cache starts over. */
const MAX_ENTRIES = 100_000;

export class SlugCache {
  private entries = new Map<string, SlugEntry | null>();
  /**
   * Moves on every forget: a load that read before a change committed and finishes after it was
   * forgotten must not put the old answer back.
   */
  private epoch = 0;

  constructor(private ctx: AppContext) {
    ctx.changes.subscribe(SLUG_TOPIC, { changed: (slug) => this.forget(slug), resync: () => this.forgetAll() });
  }

  /** The cached answer (null: unknown slug), or undefined when the slug must be loaded. */
  peek(slug: string): SlugEntry | null | undefined {
    return this.entries.get(slug);
  }

  async load(slug: string): Promise<SlugEntry | null> {
    const epoch = this.epoch;
    const entry = await this.read(slug);
    // A code whose slug is indexed but whose row is not committed yet is not remembered as unknown.
    if (entry !== undefined && epoch === this.epoch) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(slug, entry);
    }
    return entry ?? null;
  }

  /** null: unknown slug; undefined: indexed but not (or no longer) found in its corporation. */
  private async read(slug: string): Promise<SlugEntry | null | undefined> {
    const indexed = await this.ctx.store.platform.read((db) => slugIndexEntry(db, slug));
    if (!indexed) return null;
    if (!(await this.ctx.corps.get(indexed.corp_id))) return undefined;
    const code = await this.ctx.store.tenant(indexed.corp_id).read((db) => redirectRow(db, indexed.qrcode_id));
    if (!code || code.target === null) return undefined;
    return { corpId: indexed.corp_id, codeId: indexed.qrcode_id, target: code.target, active: code.status === 1 };
  }

  forget(slug: string): void {
    this.entries.delete(slug);
    this.epoch++;
  }

  private forgetAll(): void {
    this.entries.clear();
    this.epoch++;
  }
}
