// Pure timing rules of a metric: durations, the collection window and the collector's ticks.
// Kept free of I/O so that they can be property-tested on their own.

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const DURATION_RE = /^([1-9][0-9]*)([smhdw])$/;
const DAY_SECONDS = 86_400;

/** `^[1-9][0-9]*[smhdw]$` in milliseconds; null when malformed or too large to count exactly. */
export function durationMs(text: string): number | null {
  const m = DURATION_RE.exec(text);
  if (!m) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return Number.isSafeInteger(ms) ? ms : null;
}

/** `HH:MM` as seconds after midnight. */
export function dailySeconds(hhmm: string): number {
  const [h, m] = hhmm.split(":").map(Number);
  return h * 3600 + m * 60;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Seconds after local midnight of `instant` in `timeZone` (wall clock, so DST is honoured). */
export function localSecondsOfDay(instant: number, timeZone: string): number {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone, hourCycle: "h23", hour: "2-digit", minute: "2-digit", second: "2-digit" });
    formatters.set(timeZone, f);
  }
  let h = 0;
  let m = 0;
  let s = 0;
  for (const p of f.formatToParts(instant)) {
    if (p.type === "hour") h = Number(p.value);
    else if (p.type === "minute") m = Number(p.value);
    else if (p.type === "second") s = Number(p.value);
  }
  return (h % 24) * 3600 + m * 60 + s;
}

export interface WindowSpec {
  start_date: string;
  end_date: string | null;
  daily_start_time: string;
  daily_end_time: string;
}

/**
 * Whether the collector may sample at `instant`: from start_date (inclusive) until end_date
 * (exclusive), and inside the daily window [daily_start_time, daily_end_time) of the local wall
 * clock. Equal times mean the whole day; a start after the end crosses midnight. On a DST day a
 * window inside the skipped hour never opens and one inside the repeated hour opens twice.
 */
export function isInsideWindow(metric: WindowSpec, instant: number | Date, timeZone: string): boolean {
  const at = typeof instant === "number" ? instant : instant.getTime();
  if (at < Date.parse(metric.start_date)) return false;
  if (metric.end_date !== null && at >= Date.parse(metric.end_date)) return false;
  const from = dailySeconds(metric.daily_start_time);
  const to = dailySeconds(metric.daily_end_time);
  if (from === to) return true;
  const local = localSecondsOfDay(at, timeZone) % DAY_SECONDS;
  return from < to ? local >= from && local < to : local >= from || local < to;
}

export interface TickSpec {
  start_date: string;
  end_date: string | null;
  periodicity: string;
}

/**
 * The collector's first tick strictly after `after`: ticks fall on start_date + k·periodicity.
 * Null when there is none before end_date (the job is finished).
 */
export function nextTickAfter(metric: TickSpec, after: number): number | null {
  const period = durationMs(metric.periodicity);
  if (period === null) return null;
  const start = Date.parse(metric.start_date);
  const tick = after < start ? start : start + (Math.floor((after - start) / period) + 1) * period;
  if (metric.end_date !== null && tick >= Date.parse(metric.end_date)) return null;
  return tick;
}
