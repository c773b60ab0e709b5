// Instants travel as ISO 8601 text. Responses always use UTC with an explicit `+00:00` offset and
// milliseconds; the same canonical text is what the databases store, so it sorts as it reads.

const OFFSET_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})/;

export function toIso(d: Date | number): string {
  return new Date(d).toISOString().replace("Z", "+00:00");
}

export const nowIso = (): string => toIso(Date.now());

/** Parses an instant that must carry an offset; returns null when it is not one. */
export function parseInstant(text: string): Date | null {
  if (!OFFSET_RE.test(text)) return null;
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** Normalises an instant to the canonical form, or null when malformed. */
export function canonicalInstant(text: string): string | null {
  const d = parseInstant(text);
  return d ? toIso(d) : null;
}

/** `YYYY-MM-DD` (a date-time is accepted and its date part kept); null when not a real date. */
export function canonicalDate(text: string): string | null {
  const m = DATE_RE.exec(text);
  if (!m) return null;
  if (text.length > 10 && text[10] !== "T" && text[10] !== " ") return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const dt = new Date(Date.UTC(y, mo - 1, d));
  if (dt.getUTCFullYear() !== y || dt.getUTCMonth() !== mo - 1 || dt.getUTCDate() !== d) return null;
  return `${m[1]}-${m[2]}-${m[3]}`;
}

/** Offset of `timeZone` at `at`, in minutes east of UTC. */
// Building an Intl.DateTimeFormat costs tens of microseconds; contract views need several per
// response, so one formatter per zone is kept.
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

// formatToParts costs ≈ 30 µs (every contract view asks the offset of now, for its usage cycle):
// the last answer of each zone is kept for its minute (zones change offset on whole minutes).
const lastOffsets = new Map<string, { minute: number; offset: number }>();

export function zoneOffsetMinutes(timeZone: string, at: Date): number {
  const minute = Math.floor(at.getTime() / 60_000);
  const last = lastOffsets.get(timeZone);
  if (last?.minute === minute) return last.offset;
  const offset = computedOffset(timeZone, at);
  // Updated in place: a walk over many days (usage) misses every time and allocates nothing.
  if (last) {
    last.minute = minute;
    last.offset = offset;
  } else {
    if (lastOffsets.size >= 1_000) lastOffsets.clear();
    lastOffsets.set(timeZone, { minute, offset });
  }
  return offset;
}

function computedOffset(timeZone: string, at: Date): number {
  const parts = formatterOf(timeZone).formatToParts(at);
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  const asUtc = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return Math.round((asUtc - Math.floor(at.getTime() / 1000) * 1000) / 60000);
}

function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

/** A stored date as midnight in the corporation's timezone: `2025-01-31T00:00:00.000-03:00`. */
export function dateAsMidnight(date: string | null, timeZone: string): string | null {
  if (!date) return null;
  // Views render the same few dates over and over; the answer for (zone, date) never changes.
  const key = `${timeZone} ${date}`;
  let hit = midnights.get(key);
  if (hit === undefined) {
    const [y, m, d] = date.split("-").map(Number);
    // The offset at local midnight: look it up at noon UTC of that day, then refine once (DST edges).
    let offset = zoneOffsetMinutes(timeZone, new Date(Date.UTC(y, m - 1, d, 12)));
    offset = zoneOffsetMinutes(timeZone, new Date(Date.UTC(y, m - 1, d) - offset * 60000));
    hit = `${date}T00:00:00.000${formatOffset(offset)}`;
    if (midnights.size >= 50_000) midnights.clear();
    midnights.set(key, hit);
  }
  return hit;
}
const midnights = new Map<string, string>();

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** The date (YYYY-MM-DD) of an instant in a timezone. */
export function localDate(ms: number, timeZone: string): string {
  return new Date(ms + zoneOffsetMinutes(timeZone, new Date(ms)) * 60_000).toISOString().slice(0, 10);
}
