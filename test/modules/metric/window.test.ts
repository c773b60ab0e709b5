// Property tests of the collector's pure timing rules (fast-check).
// source-only: pure functions; the same in both passes.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { zoneOffsetMinutes } from "../../../src/lib/time";
import { durationMs, isInsideWindow, localSecondsOfDay, nextTickAfter } from "../../../src/modules/metric/window";

const ZONES = ["UTC", "America/Sao_Paulo", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kolkata", "Pacific/Chatham", "America/St_Johns"];
const DAY = 86_400_000;
const MIN_T = Date.UTC(2000, 0, 1);
const MAX_T = Date.UTC(2040, 0, 1);

/** Local seconds of day by another route: the zone's UTC offset from lib/time. */
function oracleSeconds(ms: number, tz: string): number {
  const off = zoneOffsetMinutes(tz, new Date(ms));
  const local = ms + off * 60_000;
  return Math.floor((((local % DAY) + DAY) % DAY) / 1000);
}

const hhmm = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 })).map(([h, m]) => `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`);
const seconds = (t: string) => Number(t.slice(0, 2)) * 3600 + Number(t.slice(3)) * 60;
const zone = fc.constantFrom(...ZONES);
const instant = fc.integer({ min: MIN_T, max: MAX_T });
const always = { start_date: "1990-01-01T00:00:00.000+00:00", end_date: null };

/** An instant whose local wall clock in `tz` reads y-m-d h:mi, or null inside a DST gap. */
function localInstant(tz: string, y: number, mo: number, d: number, h: number, mi: number): number | null {
  const wall = Date.UTC(y, mo, d, h, mi);
  let guess = wall - zoneOffsetMinutes(tz, new Date(wall)) * 60_000;
  guess = wall - zoneOffsetMinutes(tz, new Date(guess)) * 60_000;
  return oracleSeconds(guess, tz) === h * 3600 + mi * 60 ? guess : null;
}

/** Whether `tz` has the same UTC offset at `ms` and one millisecond before. */
function steadyOffset(tz: string, ms: number): boolean {
  return zoneOffsetMinutes(tz, new Date(ms)) === zoneOffsetMinutes(tz, new Date(ms - 1));
}

describe("metric/window: isInsideWindow", () => {
  test("agrees with the wall clock computed from the zone's offset, for every kind of window", () => {
    fc.assert(
      fc.property(instant, zone, hhmm, hhmm, (at, tz, from, to) => {
        expect(localSecondsOfDay(at, tz)).toBe(oracleSeconds(at, tz));
        const s = oracleSeconds(at, tz);
        const a = seconds(from);
        const b = seconds(to);
        const expected = a === b ? true : a < b ? s >= a && s < b : s >= a || s < b;
        expect(isInsideWindow({ ...always, daily_start_time: from, daily_end_time: to }, at, tz)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });

  test("a window and its reverse (crossing midnight) split every instant between them", () => {
    fc.assert(
      fc.property(instant, zone, hhmm, hhmm, (at, tz, from, to) => {
        fc.pre(from !== to);
        const one = isInsideWindow({ ...always, daily_start_time: from, daily_end_time: to }, at, tz);
        const other = isInsideWindow({ ...always, daily_start_time: to, daily_end_time: from }, at, tz);
        expect(one).not.toBe(other);
      }),
      { numRuns: 1000 },
    );
  });

  test("equal times are the whole day", () => {
    fc.assert(
      fc.property(instant, zone, hhmm, (at, tz, t) => {
        expect(isInsideWindow({ ...always, daily_start_time: t, daily_end_time: t }, at, tz)).toBe(true);
      }),
    );
  });

  test("boundaries: the daily start is inside, the daily end is not, a millisecond before it is", () => {
    fc.assert(
      fc.property(
        zone,
        fc.integer({ min: 2000, max: 2039 }),
        fc.integer({ min: 0, max: 11 }),
        fc.integer({ min: 1, max: 28 }),
        hhmm,
        hhmm,
        (tz, y, mo, d, from, to) => {
          fc.pre(from !== to);
          const w = { ...always, daily_start_time: from, daily_end_time: to };
          const start = localInstant(tz, y, mo, d, Number(from.slice(0, 2)), Number(from.slice(3)));
          const end = localInstant(tz, y, mo, d, Number(to.slice(0, 2)), Number(to.slice(3)));
          fc.pre(start !== null && end !== null);
          // At the very instant a zone changes its offset (e.g. the second 01:00 of a fall-back
          // day) the millisecond before reads another wall clock: that case belongs to the DST tests.
          fc.pre(steadyOffset(tz, start!) && steadyOffset(tz, end!));
          expect(isInsideWindow(w, start!, tz)).toBe(true);
          expect(isInsideWindow(w, end!, tz)).toBe(false);
          expect(isInsideWindow(w, end! - 1, tz)).toBe(true);
          expect(isInsideWindow(w, start! - 1, tz)).toBe(false);
        },
      ),
      { numRuns: 1000 },
    );
  });

  test("start_date is inclusive, end_date exclusive, whatever the daily window", () => {
    fc.assert(
      fc.property(instant, fc.integer({ min: 1, max: 400 * DAY }), zone, hhmm, hhmm, (start, span, tz, from, to) => {
        const m = { start_date: new Date(start).toISOString(), end_date: new Date(start + span).toISOString(), daily_start_time: from, daily_end_time: to };
        const whole = { ...m, daily_start_time: "00:00", daily_end_time: "00:00" };
        expect(isInsideWindow(whole, start, tz)).toBe(true);
        expect(isInsideWindow(whole, start + span - 1, tz)).toBe(true);
        expect(isInsideWindow(m, start - 1, tz)).toBe(false);
        expect(isInsideWindow(m, start + span, tz)).toBe(false);
        expect(isInsideWindow(m, start + span + 12345, tz)).toBe(false);
      }),
    );
  });

  test("DST in New York: a window in the skipped hour never opens, one in the repeated hour opens twice", () => {
    const skipped = { ...always, daily_start_time: "02:00", daily_end_time: "03:00" };
    // 2025-03-09 02:00 EST jumps to 03:00 EDT (07:00Z)
    for (let at = Date.UTC(2025, 2, 9, 4); at < Date.UTC(2025, 2, 9, 10); at += 60_000) {
      expect(isInsideWindow(skipped, at, "America/New_York")).toBe(false);
    }
    expect(isInsideWindow(skipped, Date.UTC(2025, 2, 10, 6, 30), "America/New_York")).toBe(true); // 02:30 EDT the next day
    // 2025-11-02 01:00-02:00 happens at 05:00Z (EDT) and again at 06:00Z (EST)
    const repeated = { ...always, daily_start_time: "01:00", daily_end_time: "02:00" };
    const inside: number[] = [];
    for (let at = Date.UTC(2025, 10, 2, 3); at < Date.UTC(2025, 10, 2, 9); at += 60_000) if (isInsideWindow(repeated, at, "America/New_York")) inside.push(at);
    expect(inside.length).toBe(120);
    expect(inside[0]).toBe(Date.UTC(2025, 10, 2, 5));
    expect(inside[inside.length - 1]).toBe(Date.UTC(2025, 10, 2, 6, 59));
  });

  test("DST in São Paulo (2018): midnight was skipped, so 00:00-01:00 did not open that day", () => {
    const w = { ...always, daily_start_time: "00:00", daily_end_time: "01:00" };
    // 2018-11-04 00:00 -03:00 became 01:00 -02:00 (03:00Z)
    for (let at = Date.UTC(2018, 10, 4, 2); at < Date.UTC(2018, 10, 4, 5); at += 60_000) {
      expect(isInsideWindow(w, at, "America/Sao_Paulo")).toBe(false);
    }
    expect(isInsideWindow(w, Date.UTC(2018, 10, 3, 3, 30), "America/Sao_Paulo")).toBe(true);
    // a crossing window 22:00-02:00 on that night: open until 02:00 local (04:00Z)
    const night = { ...always, daily_start_time: "22:00", daily_end_time: "02:00" };
    expect(isInsideWindow(night, Date.UTC(2018, 10, 4, 3, 59), "America/Sao_Paulo")).toBe(true);
    expect(isInsideWindow(night, Date.UTC(2018, 10, 4, 4, 0), "America/Sao_Paulo")).toBe(false);
  });
});

describe("metric/window: ticks", () => {
  test("durations", () => {
    expect(durationMs("1s")).toBe(1000);
    expect(durationMs("90m")).toBe(5_400_000);
    expect(durationMs("2h")).toBe(7_200_000);
    expect(durationMs("1d")).toBe(DAY);
    expect(durationMs("3w")).toBe(21 * DAY);
    for (const bad of ["0s", "1", "s", "1y", "01m", "1.5h", "9".repeat(20) + "w"]) expect(durationMs(bad)).toBeNull();
  });

  test("the next tick is the first start_date + k·periodicity after the instant, before end_date", () => {
    const unit = fc.constantFrom("s", "m", "h", "d", "w");
    fc.assert(
      fc.property(instant, fc.integer({ min: 1, max: 500 }), unit, fc.integer({ min: -100 * DAY, max: 100 * DAY }), fc.option(fc.integer({ min: 1, max: 200 * DAY })), (start, n, u, offset, span) => {
        const periodicity = `${n}${u}`;
        const p = durationMs(periodicity)!;
        const m = { start_date: new Date(start).toISOString(), end_date: span === null ? null : new Date(start + span).toISOString(), periodicity };
        const after = start + offset;
        const tick = nextTickAfter(m, after);
        const unbounded = nextTickAfter({ ...m, end_date: null }, after)!;
        expect(unbounded).toBeGreaterThan(after);
        expect((unbounded - start) % p).toBe(0);
        expect(unbounded).toBeGreaterThanOrEqual(start);
        if (after >= start) expect(unbounded - after).toBeLessThanOrEqual(p);
        else expect(unbounded).toBe(start);
        expect(tick).toBe(span !== null && unbounded >= start + span ? null : unbounded);
      }),
      { numRuns: 2000 },
    );
  });
});
