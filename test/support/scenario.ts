// Table-driven API tests (STYLE.md habit 7; PocketBase's ApiScenario is the model): one request
// with what it must answer, the outbox events it must write and the history it must record, as a
// row of a table. A suite lists its rows and `scenarios` makes one test of each, run in order over
// the suite's one app (a row may use what an earlier row created).
import { expect, test } from "bun:test";
import type { Res, TestApp } from "./helpers";
import { lastSeq, newEvents } from "./registry";

/** A value, or a function giving it when the row runs (ids and tokens exist only by then). */
type Late<T> = T | (() => T);

export interface Scenario {
  name: string;
  method: string;
  url: Late<string>;
  /** Bearer token; leave it out for an anonymous request. */
  token?: Late<string | undefined>;
  apiKey?: Late<string | undefined>;
  body?: Late<unknown>;
  headers?: Record<string, string>;
  /** Runs before the request (arranges what the row needs). */
  before?: () => unknown;
  expectStatus: number;
  /** The body must match this (a subset, as toMatchObject). */
  expectBody?: Late<Record<string, unknown> | unknown[]>;
  /** Each string must appear in the body's text. */
  expectContains?: string[];
  /** No string may appear in the body's text (secrets, internal columns). */
  expectNotContains?: Late<string[]>;
  /** A 400 names these fields (the problem document's errors[].path). */
  expectErrorPaths?: string[];
  /** The types of the outbox events the request wrote, in order; [] for none. */
  expectEvents?: string[];
  /** The Changes the request recorded ({target_type, action} of each, any order); [] for none. */
  expectHistory?: { target_type: string; action: string }[];
  /** Further checks of the answer and the events it wrote. */
  check?: (res: Res, events: ReturnType<typeof newEvents>) => unknown;
}

export interface ScenarioTarget {
  t: TestApp;
  /** The corporation whose outbox and history the rows check. */
  corpId: string;
  /** A token that may read that corporation's whole history (its admin's). */
  historyToken: string;
}

const late = <T>(v: Late<T>): T => (typeof v === "function" ? (v as () => T)() : v);

async function historyTotal(target: ScenarioTarget): Promise<number> {
  const res = await target.t.req("GET", "/api/history?limit=1", { token: target.historyToken });
  if (res.status !== 200) throw new Error(`history unreadable: ${res.status} ${res.text}`);
  return res.body.total as number;
}

/** Sends one row's request and checks everything the row expects; returns the answer. */
export async function runScenario(target: ScenarioTarget, s: Scenario): Promise<Res> {
  await s.before?.();
  const mark = lastSeq(target.t, target.corpId);
  const changesBefore = s.expectHistory ? await historyTotal(target) : 0;
  const res = await target.t.req(s.method, late(s.url), { token: late(s.token), apiKey: late(s.apiKey), body: late(s.body), headers: s.headers });
  const events = newEvents(target.t, target.corpId, mark);
  expect({ status: res.status, body: res.body }).toMatchObject({ status: s.expectStatus });
  if (s.expectBody !== undefined) expect(res.body).toMatchObject(late(s.expectBody));
  for (const text of s.expectContains ?? []) expect(res.text).toContain(text);
  for (const text of late(s.expectNotContains) ?? []) expect(res.text).not.toContain(text);
  if (s.expectErrorPaths) expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(expect.arrayContaining(s.expectErrorPaths));
  if (s.expectEvents) expect(events.map((e) => e.type)).toEqual(s.expectEvents);
  if (s.expectHistory) {
    const added = (await historyTotal(target)) - changesBefore;
    const recent = added > 0 ? ((await target.t.req("GET", `/api/history?limit=${added}`, { token: target.historyToken })).body.items as { target_type: string; action: string }[]) : [];
    const got = recent.map((c) => ({ target_type: c.target_type, action: c.action }));
    expect(got).toHaveLength(s.expectHistory.length);
    expect(got).toEqual(expect.arrayContaining(s.expectHistory));
  }
  await s.check?.(res, events);
  return res;
}

/** One test per row, named by the row, run in the table's order against the suite's app. */
export function scenarios(target: () => ScenarioTarget, rows: Scenario[]): void {
  for (const row of rows) test(row.name, async () => void (await runScenario(target(), row)));
}
