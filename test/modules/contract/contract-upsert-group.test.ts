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

test("upserts of one burst naming the same contract, customer or new agent see each other as if one at a time; the others are unaffected", async () => {
  // Contracts 200–208 exist, their cities linked: the burst's upserts change nothing shared but what they name.
  const ids: string[] = [];
  for (let i = 200; i <= 208; i++) ids.push((await upsert(contractBody(i))).body.id);
  const mark = lastSeq(f.t, corpId);
  const agent = { identity: "agent-new", name: "Agent New", display_name: null, tp_doc_identity: "CPF", doc_identity: "88888888888", corporate: false, address: null };
  const bodies = [
    ...Array.from({ length: 8 }, (_, i) => ({ ...contractBody(200 + i), total_value: 10 + i })),
    // The same contract twice: the second sees the first's change.
    { ...contractBody(208), total_value: 1 },
    { ...contractBody(208), total_value: 2 },
    // Contract 200's customer as another contract's billing customer, changed: both see one person.
    { ...contractBody(302), billing_customer: { ...contractBody(200).customer, display_name: "Renamed" } },
  ];
  const res = await Promise.all(bodies.map(upsert));
  expect(res.map((r) => r.status)).toEqual(Array(bodies.length).fill(200));
  // Two new contracts creating the same new agent, beside updates: one person, linked once.
  const agents = await Promise.all([{ ...contractBody(300), agent }, { ...contractBody(301), agent }, { ...contractBody(201), total_value: 5 }].map(upsert));
  expect(agents.map((r) => r.status)).toEqual([200, 200, 200]);
  expect(agents[1].body.agent.id).toBe(agents[0].body.agent.id);
  expect(res.slice(0, 8).map((r) => r.body.total_value)).toEqual(Array.from({ length: 8 }, (_, i) => 10 + i));

  // Contract 208: two updates, the second's "before" the first's "after", the last one stored.
  // Which of two upserts naming one record goes first depends on the order the requests arrive
  // (and two changes may share their instant): the changes of `field` must chain from `from`, each
  // starting where another ended, and end at the stored value.
  const chain = async (type: string, id: string, field: string, from: unknown) => {
    const history = await f.t.req("GET", `/api/history?target_type=${type}&target_id=${id}&limit=50`, { token });
    expect(history.status).toBe(200);
    const left = (history.body.items as { action: string; changes: { field: string; before: unknown; after: unknown }[] }[])
      .filter((c) => c.action === "update")
      .map((c) => c.changes.find((x) => x.field === field))
      .filter((x) => x !== undefined);
    const order: unknown[] = [from];
    while (left.length) {
      const next = left.findIndex((x) => x.before === order[order.length - 1]);
      expect(next).toBeGreaterThanOrEqual(0);
      order.push(left.splice(next, 1)[0].after);
    }
    return order;
  };
  const totals = await chain("contract", ids[8], "total_value", 99.9);
  expect(totals).toHaveLength(3);
  expect((await f.t.req("GET", `/api/contract/${ids[8]}`, { token })).body.total_value).toBe(totals[2]);

  // Contract 200's customer, named by two upserts with two display names.
  const customerId = res[0].body.customer.id as string;
  expect(res[10].body.billing_customer.id).toBe(customerId);
  const names = await chain("person", customerId, "display_name", contractBody(200).customer.display_name);
  expect(names).toContain("Renamed");
  expect((await f.t.req("GET", `/api/person/${customerId}`, { token })).body.display_name).toBe(names[names.length - 1]);

  const events = newEvents(f.t, corpId, mark);
  expect(events.filter((e) => e.type === "PERSON_AFTER_INSERT" && e.payload.data.name === "Agent New")).toHaveLength(1);
  expect(events.filter((e) => e.type === "CONTRACT_AFTER_INSERT")).toHaveLength(3);
  expect(events.filter((e) => e.type === "CONTRACT_AFTER_UPDATE")).toHaveLength(11);
});
