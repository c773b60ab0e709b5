// The JSON texts of person views as GET /api/person's pages answer them, kept per change stamp
// (db/change-stamp.ts readStamp: SQLite's stamp of a read connection, PostgreSQL's generation of
// the corporation), as the contract GET keeps its bodies. In cluster mode a search page whose
// match set is kept (db/list.ts keptPlainPage) and whose persons' texts are kept for the
// corporation's current generation is answered with no statement at all
// (service.ts personPageText); elsewhere a page's kept texts save their views and JSON.
// One per app (personModule), swept by its job: docs/architecture.md, "Search".
import type { Job } from "../../core/jobs";

/** The job's name (GET /api/system/jobs) and how often it sweeps. */
export const PERSON_VIEWS_JOB = "person-views";
const SWEEP_MS = 5_000;
/**
 * A text not answered for this long is dropped by the next sweep. Short, as the contract bodies'
 * (contract/service.ts BODIES_IDLE_MS): what is live is doubled by the heap's next growth, and a
 * text read again later costs only its view.
 */
const IDLE_MS = 10_000;
/**
 * Characters held at most (one byte each for Latin-1 text, two beyond it), the oldest kept first
 * out: a view of the bench's persons is ≈ 450 characters, so ≈ 2,300 views (46 pages of 50), with
 * the map's own entries ≈ 1.3 MB. 4 M characters (≈ 5 MB, filled by the bench's terms never
 * repeated, whose views are seldom read again) read ≈ 10 MB more RSS in the rows after.
 */
const MAX_CHARS = 1024 * 1024;

interface KeptView {
  stamp: number;
  text: string;
  usedAt: number;
}

export class PersonViews {
  /**
   * By person id; an entry of another stamp is a miss (and is replaced). A stamp names one
   * database (one corporation, on one node), so the same id in another corporation never matches.
   */
  private kept = new Map<string, KeptView>();
  private chars = 0;

  constructor(private now: () => number = Date.now) {}

  /** The text of person `id` kept for `stamp`. */
  get(stamp: number, id: string): string | undefined {
    const v = this.kept.get(id);
    if (v === undefined || v.stamp !== stamp) return undefined;
    v.usedAt = this.now();
    return v.text;
  }

  /** Keeps a text computed by a read whose stamp held to its end (stampHolds). */
  set(stamp: number, id: string, text: string): void {
    if (text.length > MAX_CHARS) return;
    const old = this.kept.get(id);
    if (old) {
      this.kept.delete(id);
      this.chars -= old.text.length;
    }
    for (const [key, v] of this.kept) {
      if (this.chars + text.length <= MAX_CHARS) break;
      this.kept.delete(key);
      this.chars -= v.text.length;
    }
    this.kept.set(id, { stamp, text, usedAt: this.now() });
    this.chars += text.length;
  }

  /** Drops the texts not answered for IDLE_MS; whether any was held. */
  sweep(): boolean {
    const held = this.kept.size > 0;
    const now = this.now();
    for (const [key, v] of this.kept) {
      if (now - v.usedAt < IDLE_MS) continue;
      this.kept.delete(key);
      this.chars -= v.text.length;
    }
    return held;
  }

  clear(): void {
    this.kept.clear();
    this.chars = 0;
  }

  /** What is held: texts and their characters (the bench's memory figures, tests). */
  get size(): { views: number; chars: number } {
    return { views: this.kept.size, chars: this.chars };
  }
}

/**
 * The sweep as a job of ctx.jobs (started with the app, stopped and emptied at close). `track`
 * records a pass that had texts to look at (an idle app's sweeps write nothing).
 */
export function personViewsJob(views: PersonViews, track: (pass: () => Promise<unknown>) => Promise<unknown>): Job & { views: PersonViews } {
  let timer: ReturnType<typeof setInterval> | null = null;
  const sweep = async () => views.sweep();
  return {
    name: PERSON_VIEWS_JOB,
    views,
    start() {
      timer = setInterval(() => {
        if (views.size.views) track(sweep).catch(() => {});
      }, SWEEP_MS);
      timer.unref?.();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
      views.clear();
    },
    runOnce: sweep,
  };
}

/** The console translates this sentence's form (console/src/screens/jobs.tsx SCHEDULES). */
export const PERSON_VIEWS_SCHEDULE = `every ${SWEEP_MS / 1000} s`;
export const PERSON_VIEWS_EVERY_MS = SWEEP_MS;
