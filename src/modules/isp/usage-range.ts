// Usage over a range of days from the two rollups: the whole calendar months inside the range from
// isp_usage_monthly (one row per contract and month), only the days at its ends that do not make a
// whole month from isp_usage_daily. Measured (docs/architecture.md, "Traffic usage"): a month of
// 10,000 contracts read from the daily rows was ≈ 210 ms of grouping 300,000 index entries; from
// the monthly rows ≈ 12 ms.
import { clientOf, readTogether } from "../../db/rows";
import type { TogetherRead } from "../../db/handle";
import type { TenantDb } from "../../db/sqlite";

const DAY_MS = 86_400_000;

const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
const firstOfMonth = (date: string) => `${date.slice(0, 7)}-01`;
function firstOfNextMonth(date: string): string {
  const [y, m] = date.split("-").map(Number);
  return new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10);
}

/**
 * [start, end) dates as the rollups read them: whole months [monthFrom, monthTo) (YYYY-MM), and
 * the leading [start, headEnd) and trailing [tailStart, end) days outside them (empty ranges when
 * the range starts or ends on a month's edge). A range inside one month is all days.
 */
export interface RollupSplit {
  monthFrom: string;
  monthTo: string;
  headEnd: string;
  tailStart: string;
}

export function splitRange(start: string, end: string): RollupSplit {
  const firstWhole = start === firstOfMonth(start) ? start : firstOfNextMonth(start);
  const endWhole = firstOfMonth(end);
  if (firstWhole >= endWhole) return { monthFrom: "", monthTo: "", headEnd: end, tailStart: end };
  return { monthFrom: firstWhole.slice(0, 7), monthTo: endWhole.slice(0, 7), headEnd: firstWhole, tailStart: endWhole };
}

/** The rows (contract_id, input_bytes, output_bytes) of the range's pieces; `where` narrows each piece (?5 onwards). */
function piecesSql(where: string): string {
  return `SELECT contract_id, input_bytes, output_bytes FROM isp_usage_monthly WHERE month >= ?1 AND month < ?2${where}
    UNION ALL SELECT contract_id, input_bytes, output_bytes FROM isp_usage_daily WHERE day >= ?3 AND day < ?4${where}
    UNION ALL SELECT contract_id, input_bytes, output_bytes FROM isp_usage_daily WHERE day >= ?5 AND day < ?6${where}`;
}

function piecesArgs(start: string, end: string): string[] {
  const s = splitRange(start, end);
  return [s.monthFrom, s.monthTo, start, s.headEnd, s.tailStart, end];
}

/** Per contract with usage in [start, end): its input and output bytes. */
export async function usageSums(db: TenantDb, start: string, end: string): Promise<{ contract_id: string; input_bytes: number; output_bytes: number }[]> {
  const rows = (await clientOf(db)
    .query(`SELECT contract_id, sum(input_bytes) AS input_bytes, sum(output_bytes) AS output_bytes FROM (${piecesSql("")}) AS pieces GROUP BY contract_id`)
    .all(...piecesArgs(start, end))) as unknown as { contract_id: string; input_bytes: number | string; output_bytes: number | string }[];
  return rows.map((r) => ({ contract_id: r.contract_id, input_bytes: Number(r.input_bytes), output_bytes: Number(r.output_bytes) }));
}

/**
 * Bytes (input + output) a contract used on the days fromDay..toDay (inclusive, YYYY-MM-DD in the
 * corporation's timezone). A calendar month is one index probe of isp_usage_monthly; other
 * ranges add at most the days at their ends. Read or inside a write.
 */
export async function usedBytesBetween(db: TenantDb, contractId: string, fromDay: string, toDay: string): Promise<number> {
  if (fromDay > toDay) return 0;
  const read = usedBytesBetweenRead(contractId, fromDay, toDay);
  return usedOfRow(await clientOf(db).query(read.sql).get(...read.params));
}

/** usedBytesBetween's statement (fromDay ≤ toDay), for a caller that reads it together with others (readTogether); usedOfRow reads its row. */
export function usedBytesBetweenRead(contractId: string, fromDay: string, toDay: string): TogetherRead {
  return { sql: `SELECT coalesce(sum(input_bytes + output_bytes), 0) AS used FROM (${piecesSql(" AND contract_id = ?7")}) AS pieces`, params: [...piecesArgs(fromDay, addDays(toDay, 1)), contractId] };
}

export const usedOfRow = (row: unknown): number => Number((row as { used: number | string }).used);

/** usedBytesBetween for many contracts at once (a page of contract views): by contract id, those with none left out. */
export async function usedBytesOf(db: TenantDb, contractIds: string[], fromDay: string, toDay: string): Promise<Map<string, number>> {
  if (fromDay > toDay || !contractIds.length) return new Map();
  const rows = (await clientOf(db)
    .query(`SELECT contract_id, sum(input_bytes + output_bytes) AS used FROM (${piecesSql(" AND contract_id IN (SELECT value FROM json_each(?7))")}) AS pieces GROUP BY contract_id`)
    .all(...piecesArgs(fromDay, addDays(toDay, 1)), JSON.stringify(contractIds))) as unknown as { contract_id: string; used: number | string }[];
  return new Map(rows.map((r) => [r.contract_id, Number(r.used)]));
}

/** The sums' columns a ranked read may sort and filter on (usage-service.ts UsageRow's non-label fields). */
export type SumField = "contract_id" | "input_bytes" | "output_bytes" | "total_bytes";

/**
 * One page of usageSums ranked by `sort` (ties by contract id), with exact `filters`, and how many
 * rows match: sorted and counted by the database, so a list of 10,000 contracts builds the page's
 * rows only (it built three objects per contract per request: the list's heaviest garbage). A
 * range of one whole calendar month reads that month's rows as they are, one per contract, with
 * nothing to group (10,000 contracts: ≈ 3 ms of CPU, against ≈ 17 grouped and ranked in memory).
 */
export async function rankedUsageSums(
  db: TenantDb,
  start: string,
  end: string,
  sort: { field: SumField; descending: boolean },
  filters: [SumField, string | number][],
  limit: number,
  offset: number,
): Promise<{ rows: { contract_id: string; input_bytes: number; output_bytes: number }[]; total: number }> {
  const split = splitRange(start, end);
  const oneMonth = split.monthFrom !== "" && split.headEnd === start && split.tailStart === end && firstOfNextMonth(`${split.monthFrom}-01`).slice(0, 7) === split.monthTo;
  const args: (string | number)[] = oneMonth ? [split.monthFrom] : piecesArgs(start, end);
  const sums = oneMonth
    ? "SELECT contract_id, input_bytes, output_bytes, input_bytes + output_bytes AS total_bytes FROM isp_usage_monthly WHERE month = ?1"
    : `SELECT contract_id, input_bytes, output_bytes, input_bytes + output_bytes AS total_bytes FROM
        (SELECT contract_id, sum(input_bytes) AS input_bytes, sum(output_bytes) AS output_bytes FROM (${piecesSql("")}) AS pieces GROUP BY contract_id) AS grouped`;
  const where = filters.map(([field, value]) => {
    args.push(value);
    return `${field} = ?${args.length}`;
  });
  const matching = `SELECT * FROM (${sums}) AS sums${where.length ? ` WHERE ${where.join(" AND ")}` : ""}`;
  const [page, count] = await readTogether(db, [
    {
      sql: `SELECT contract_id, input_bytes, output_bytes FROM (${matching}) AS matching ORDER BY ${sort.field} ${sort.descending ? "DESC" : "ASC"}, contract_id LIMIT ?${args.length + 1} OFFSET ?${args.length + 2}`,
      params: [...args, limit, offset],
      all: true,
    },
    { sql: `SELECT count(*) AS n FROM (${matching}) AS matching`, params: args },
  ]);
  const rows = (page as unknown as { contract_id: string; input_bytes: number | string; output_bytes: number | string }[]).map((r) => ({ contract_id: r.contract_id, input_bytes: Number(r.input_bytes), output_bytes: Number(r.output_bytes) }));
  return { rows, total: Number((count as { n: number | string }).n) };
}
