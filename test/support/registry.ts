// Shared set-up for the registry suites: two corporations, an outbox reader and table counts.
import { afterAll, beforeAll } from "bun:test";
import { asc, count, gt } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { events } from "../../src/db/tenant/schema";
import * as tenant from "../../src/db/tenant/schema";
import { addCorp, addUser, makeApp, startAndLogin, type TestApp } from "./helpers";

export const REGISTRY_SERVICES = ["platform.city", "platform.externalapp", "platform.person", "platform.product", "platform.contract", "platform.core"];

export async function registryApp() {
  const t = await makeApp();
  const admin = await startAndLogin(t);
  const otherCorpId = await addCorp(t, "globex");
  const other = await addUser(t, otherCorpId, { services: REGISTRY_SERVICES });
  /** A member of acme without any registry permission. */
  const nobody = await addUser(t, admin.corpId, { services: ["platform.webhook"] });
  return { t, admin, otherCorpId, other, nobody };
}

/**
 * A registry suite's app, opened before the file's tests and closed after them, with what scenario
 * rows name: the target (acme's outbox and history), and the tokens of acme's admin, of a user of
 * the other corporation and of a member without registry permissions (functions, read when a row
 * runs).
 */
export function registrySuite() {
  let f: Awaited<ReturnType<typeof registryApp>>;
  beforeAll(async () => {
    f = await registryApp();
  });
  afterAll(() => f.t.close());
  return {
    get f() {
      return f;
    },
    /** acme's admin token and corporation, once the suite is open: `const { f, token, corpId } = suite` in a test. */
    get token() {
      return f.admin.token;
    },
    get corpId() {
      return f.admin.corpId;
    },
    target: () => ({ t: f.t, corpId: f.admin.corpId, historyToken: f.admin.token }),
    admin: () => f.admin.token,
    other: () => f.other.token,
    nobody: () => f.nobody.token,
  };
}

/** The corporation's database file, read through its own connection (the binary's too). */
const tenantFile = (t: TestApp, corpId: string) => drizzle(t.sql(corpId));

/** Reads the outbox after a mark: `const mark = lastSeq(t, corp); ...; newEvents(t, corp, mark)`. */
export function lastSeq(t: TestApp, corpId: string): number {
  const row = tenantFile(t, corpId).select({ seq: events.seq }).from(events).orderBy(asc(events.seq)).all().pop();
  return row?.seq ?? 0;
}

export function newEvents(t: TestApp, corpId: string, after: number): { type: string; record_id: string; payload: any }[] {
  return tenantFile(t, corpId)
    .select()
    .from(events)
    .where(gt(events.seq, after))
    .orderBy(asc(events.seq))
    .all()
    .map((e) => ({ type: e.type, record_id: e.record_id, payload: JSON.parse(e.payload) }));
}

const COUNTED = {
  cities: tenant.cities,
  persons: tenant.persons,
  contracts: tenant.contracts,
  external_links: tenant.externalLinks,
  contract_configs: tenant.contractConfigs,
  events: tenant.events,
};

export function tableCounts(t: TestApp, corpId: string): Record<string, number> {
  const db = tenantFile(t, corpId);
  const out: Record<string, number> = {};
  for (const [name, table] of Object.entries(COUNTED)) out[name] = db.select({ n: count() }).from(table as any).get()!.n;
  return out;
}
