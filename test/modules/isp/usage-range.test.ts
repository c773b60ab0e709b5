// Usage over a range from the two rollups (usage-range.ts): whole months from isp_usage_monthly,
// the end days from isp_usage_daily, equal to the days' sum for any range.
// source-only: writes rollups and reads usedBytesBetween through the app's store.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { splitRange, usedBytesBetween } from "../../../src/modules/isp/usage-range";
import { addUsage } from "../../../src/modules/isp/usage-service";
import { makeApp, startAndLogin, type TestApp } from "../../support/helpers";

let t: TestApp;
let door: ReturnType<TestApp["ctx"]["store"]["tenant"]>;
/** c1's bytes per day: day k of 2026 (0 = Jan 1st) holds k + 1 bytes in and 1 out, for 120 days. */
const DAYS = Array.from({ length: 120 }, (_, k) => new Date(Date.UTC(2026, 0, 1 + k)).toISOString().slice(0, 10));
const bytesOn = (day: string) => DAYS.indexOf(day) + 2;

beforeAll(async () => {
  t = await makeApp();
  const admin = await startAndLogin(t);
  door = t.ctx.store.tenant(admin.corpId);
  await door.write(async (tx) => {
    // In several records, as accounting adds them: a month's row is the sum of all of them.
    for (let k = 0; k < DAYS.length; k += 7) await addUsage(tx, "c1", DAYS.slice(k, k + 7).map((day) => ({ day, input: bytesOn(day) - 1, output: 1, seconds: 60 })));
    await addUsage(tx, "c2", [{ day: "2026-02-10", input: 1_000, output: 0, seconds: 0 }]);
  });
});
afterAll(() => t.close());

describe("usage over a range", () => {
  test("splitRange: whole months in the middle, the days outside them at the ends", () => {
    expect(splitRange("2026-01-01", "2026-04-01")).toEqual({ monthFrom: "2026-01", monthTo: "2026-04", headEnd: "2026-01-01", tailStart: "2026-04-01" });
    expect(splitRange("2026-01-15", "2026-03-10")).toEqual({ monthFrom: "2026-02", monthTo: "2026-03", headEnd: "2026-02-01", tailStart: "2026-03-01" });
    // Inside one month, or across one month's end without a whole month: all days.
    expect(splitRange("2026-02-03", "2026-02-20")).toEqual({ monthFrom: "", monthTo: "", headEnd: "2026-02-20", tailStart: "2026-02-20" });
    expect(splitRange("2026-01-15", "2026-02-15")).toEqual({ monthFrom: "", monthTo: "", headEnd: "2026-02-15", tailStart: "2026-02-15" });
    expect(splitRange("2025-12-31", "2026-02-01")).toEqual({ monthFrom: "2026-01", monthTo: "2026-02", headEnd: "2026-01-01", tailStart: "2026-02-01" });
  });

  test("usedBytesBetween is the days' sum for any range, the contract's only; 0 for a backwards range", async () => {
    const ranges: [string, string][] = [
      ["2026-01-01", "2026-01-31"],
      ["2026-01-01", "2026-04-30"],
      ["2026-01-15", "2026-02-14"], // a cycle starting on the 15th
      ["2026-01-20", "2026-03-05"],
      ["2026-02-28", "2026-03-01"],
      ["2026-03-10", "2026-03-10"],
      ["2025-11-01", "2026-01-02"],
      ["2026-04-25", "2026-06-30"],
    ];
    for (const [from, to] of ranges) {
      const expected = DAYS.filter((d) => d >= from && d <= to).reduce((sum, d) => sum + bytesOn(d), 0);
      expect([from, to, await door.read((db) => usedBytesBetween(db, "c1", from, to))]).toEqual([from, to, expected]);
    }
    expect(await door.read((db) => usedBytesBetween(db, "c2", "2026-02-01", "2026-02-28"))).toBe(1_000);
    expect(await door.read((db) => usedBytesBetween(db, "c2", "2026-02-11", "2026-03-31"))).toBe(0);
    expect(await door.read((db) => usedBytesBetween(db, "c1", "2026-02-10", "2026-02-01"))).toBe(0);
  });
});
