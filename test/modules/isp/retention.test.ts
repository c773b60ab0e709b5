// The ISP prune functions retention calls (issue 16: each module prunes its own tables): each
// deletes only rows past the cutoff, at most `limit` per call, and says how many it deleted.
// source-only: calls the service functions through the app's store.
import { afterEach, describe, expect, test } from "bun:test";
import { pruneIspRadiusAccounting, pruneIspRadiusSessions } from "../../../src/modules/isp/accounting-service";
import { pruneIspRadiusAttempts } from "../../../src/modules/isp/attempt-service";
import { addUsage, pruneIspUsageDaily } from "../../../src/modules/isp/usage-service";
import { makeApp, startAndLogin, type TestApp } from "../../support/helpers";

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().replace("Z", "+00:00");
const idAt = (ms: number) => Bun.randomUUIDv7("hex", ms);
/** The smallest UUID v7 of an instant (as retention computes it). */
const idFloor = (ms: number) => {
  const hex = ms.toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
};

let t: TestApp;
afterEach(() => t?.close());

async function corp() {
  t = await makeApp();
  const admin = await startAndLogin(t);
  const door = t.ctx.store.tenant(admin.corpId);
  const ids = (table: string) => door.read(async (db) => (await db.$client.query<{ id: string }>(`SELECT id FROM ${table} ORDER BY id`).all()).map((r) => r.id));
  return { door, ids };
}

describe("isp retention: prune functions", () => {
  test("pruneIspRadiusAccounting: records received before the cutoff go, by receive time, in batches of `limit`", async () => {
    const { door, ids } = await corp();
    const now = Date.now();
    const cutoff = now - 400 * DAY;
    const old: string[] = [];
    const kept: string[] = [];
    await door.write(async (tx) => {
      const insert = tx.$client.query(
        `INSERT INTO isp_radius_accounting (id, nas_id, nas_ip, username, session_id, status_type, session_time, event_at, received_at, attributes)
         VALUES (?1, 'nas', '192.0.2.10', 'maria', ?1, 'Stop', 60, ?2, ?3, '{}')`,
      );
      const row = async (receivedAt: number, eventAt = receivedAt) => {
        const id = idAt(receivedAt);
        await insert.run(id, iso(eventAt), iso(receivedAt));
        return id;
      };
      old.push(await row(cutoff - DAY), await row(cutoff - 100 * DAY), await row(cutoff - 60_000));
      // The NAS's clock (event_at) does not count.
      kept.push(await row(cutoff + DAY), await row(now - DAY, now - 900 * DAY), await row(cutoff + 60_000));
    });
    const prune = (limit: number) => door.write((tx) => pruneIspRadiusAccounting(tx, iso(cutoff), limit, idFloor(cutoff + 60_000)));
    expect(await prune(2)).toBe(2);
    expect(await prune(2)).toBe(1);
    expect(await prune(2)).toBe(0);
    expect(await ids("isp_radius_accounting")).toEqual([...kept].sort());
  });

  test("pruneIspRadiusSessions: sessions stale since before the cutoff go, open or closed", async () => {
    const { door, ids } = await corp();
    const now = Date.now();
    const at = (ago: number) => iso(now - ago);
    await door.write(async (tx) => {
      const insert = tx.$client.query(
        "INSERT INTO isp_radius_sessions (id, nas_id, acct_session_id, username, started_at, updated_at, open, stale_at, received_at, created_at) VALUES (?1, 'nas', ?1, 'maria', ?2, ?2, ?3, ?2, ?2, ?2)",
      );
      await insert.run("old-closed", at(401 * DAY), 0);
      await insert.run("old-stale", at(402 * DAY), 1);
      await insert.run("recent", at(10 * DAY), 0);
    });
    const cutoff = iso(now - 400 * DAY);
    expect(await door.write((tx) => pruneIspRadiusSessions(tx, cutoff, 1))).toBe(1);
    expect(await door.write((tx) => pruneIspRadiusSessions(tx, cutoff, 10))).toBe(1);
    expect(await ids("isp_radius_sessions")).toEqual(["recent"]);
  });

  test("pruneIspUsageDaily: daily usage of days before the cutoff day goes, in batches of `limit`; the months keep their days' sums", async () => {
    const { door } = await corp();
    const share = (day: string) => ({ day, input: 1, output: 2, seconds: 3 });
    await door.write(async (tx) => {
      await addUsage(tx, "c1", ["2024-11-30", "2024-12-30", "2024-12-31", "2025-01-01", "2025-01-02"].map(share));
      await addUsage(tx, "c2", [share("2024-12-31")]);
    });
    const months = () =>
      door.read(async (db) =>
        db.$client.query<{ contract_id: string; month: string; input_bytes: number; output_bytes: number; session_seconds: number }>("SELECT contract_id, month, input_bytes, output_bytes, session_seconds FROM isp_usage_monthly ORDER BY contract_id, month").all(),
      );
    expect(await months()).toEqual([
      { contract_id: "c1", month: "2024-11", input_bytes: 1, output_bytes: 2, session_seconds: 3 },
      { contract_id: "c1", month: "2024-12", input_bytes: 2, output_bytes: 4, session_seconds: 6 },
      { contract_id: "c1", month: "2025-01", input_bytes: 2, output_bytes: 4, session_seconds: 6 },
      { contract_id: "c2", month: "2024-12", input_bytes: 1, output_bytes: 2, session_seconds: 3 },
    ]);
    // Oldest first: c1's 2024-11-30 and 2024-12-30.
    expect(await door.write((tx) => pruneIspUsageDaily(tx, "2025-01-01", 2))).toBe(2);
    expect(await months()).toEqual([
      { contract_id: "c1", month: "2024-12", input_bytes: 1, output_bytes: 2, session_seconds: 3 },
      { contract_id: "c1", month: "2025-01", input_bytes: 2, output_bytes: 4, session_seconds: 6 },
      { contract_id: "c2", month: "2024-12", input_bytes: 1, output_bytes: 2, session_seconds: 3 },
    ]);
    expect(await door.write((tx) => pruneIspUsageDaily(tx, "2025-01-01", 2))).toBe(2);
    expect(await door.write((tx) => pruneIspUsageDaily(tx, "2025-01-01", 2))).toBe(0);
    const left = await door.read(async (db) => db.$client.query<{ day: string }>("SELECT day FROM isp_usage_daily ORDER BY day").all());
    expect(left.map((r) => r.day)).toEqual(["2025-01-01", "2025-01-02"]);
    expect(await months()).toEqual([{ contract_id: "c1", month: "2025-01", input_bytes: 2, output_bytes: 4, session_seconds: 6 }]);
  });

  test("pruneIspRadiusAttempts: attempts made before the cutoff go", async () => {
    const { door, ids } = await corp();
    const now = Date.now();
    await door.write(async (tx) => {
      const insert = tx.$client.query("INSERT INTO isp_radius_attempts (id, at, username, nas_ip, outcome, reason) VALUES (?1, ?2, 'maria', '192.0.2.10', 'reject', 'bad-password')");
      await insert.run("a-31", iso(now - 31 * DAY));
      await insert.run("a-45", iso(now - 45 * DAY));
      await insert.run("a-29", iso(now - 29 * DAY));
    });
    expect(await door.write((tx) => pruneIspRadiusAttempts(tx, iso(now - 30 * DAY), 1_000))).toBe(2);
    expect(await ids("isp_radius_attempts")).toEqual(["a-29"]);
  });
});
