// Concurrent external-app upserts share one commit (writeGrouped): each still succeeds or fails alone.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { TEST_BACKEND } from "../../support/backend";
import { contractBody } from "../../support/contract-body";
import { newEvents, lastSeq, registryApp } from "../../support/registry";

let f: Awaited<ReturnType<typeof registryApp>>;
let token: string;
let corpId: string;

beforeAll(async () => {
  f = await registryApp();
  token = f.admin.token;
  corpId = f.admin.corpId;
  await f.t.req("POST", "/api/externalapp", { token, body: { name: "erp" } });
});
afterAll(() => f.t.close());

const upsert = (body: unknown) => f.t.req("POST", "/api/contract/create/externalapp/name/erp", { token, body });

test("a burst of upserts: the failing ones roll back alone, the others are committed and answered", async () => {
  await upsert(contractBody(0));
  const mark = lastSeq(f.t, corpId);
  const bodies = [
    ...Array.from({ length: 12 }, (_, i) => contractBody(i + 1)),
    // Another identity with contract 0's number: 409, and its new customer is not kept. (Contract
    // 0 is committed before the burst: with a number of the burst itself, which of the two got the
    // 409 would depend on the order the requests reach the writer, which PostgreSQL's reads vary.)
    { ...contractBody(500), number: "C-0" },
    // An update of contract 0 in the same burst.
    { ...contractBody(0), total_value: 7 },
    // A bad date is refused before anything of it is written.
    { ...contractBody(501), start_date: "2025-02-30" },
  ];
  const res = await Promise.all(bodies.map(upsert));
  expect(res.slice(0, 12).map((r) => r.status)).toEqual(Array(12).fill(200));
  expect(res.slice(0, 12).map((r) => r.body.identity)).toEqual(bodies.slice(0, 12).map((b: any) => b.identity));
  // A create shows its generated password, once.
  for (const r of res.slice(0, 12)) expect(r.body.config.password).not.toBe("********");
  expect(res[12].status).toBe(409);
  expect(res[13].status).toBe(200);
  expect(res[13].body.total_value).toBe(7);
  expect(res[13].body.config.password).toBe("********");
  expect(res[14].status).toBe(400);

  // Committed: a separate connection to the file sees every acknowledged write and nothing else.
  // (PostgreSQL: t.sql is itself another connection.)
  const file = TEST_BACKEND === "pg" ? f.t.sql(corpId) : new Database(f.t.sql(corpId).filename, { readonly: true });
  try {
    expect(file.query("SELECT count(*) AS n FROM contracts").get()).toEqual({ n: 13 });
    expect(file.query("SELECT count(*) AS n FROM persons WHERE name LIKE '% 500'").get()).toEqual({ n: 0 });
    expect(file.query("SELECT total_value AS v FROM contracts WHERE number = 'C-0'").get()).toEqual({ v: 7 });
  } finally {
    file.close();
  }
  const events = newEvents(f.t, corpId, mark);
  expect(events.filter((e) => e.type === "CONTRACT_AFTER_INSERT").length).toBe(12);
  expect(events.filter((e) => e.type === "CONTRACT_AFTER_UPDATE").map((e) => e.payload.data.total_value)).toEqual([7]);
  expect(events.some((e) => e.type === "PERSON_AFTER_INSERT" && e.payload.data.name.endsWith(" 500"))).toBe(false);
  // The event payload is the GET view: the password masked.
  for (const e of events.filter((e) => e.type.startsWith("CONTRACT_"))) expect(e.payload.data.config.password).toBe("********");
});
