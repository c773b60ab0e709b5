import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeApp, startAndLogin, type TestApp } from "../helpers";
import { operationsOf } from "../reliability/openapi";
import { seedFixtures, pathWith } from "../reliability/fixtures";

let t: TestApp;
let admin: Awaited<ReturnType<typeof startAndLogin>>;
beforeAll(async () => {
  t = await makeApp();
  admin = await startAndLogin(t);
});
afterAll(() => t.close());

const GROUPS = /^\/api\/(city|externalapp|person|product|contract|classification|webhook|metric|qrcode|isp)(\/|$)/;

test("probe lists", async () => {
  const ops = await operationsOf(t);
  const values = await seedFixtures(t, admin.token, ops, "p1", admin.corpId);
  // a value, an access, a delivery
  await t.req("POST", `/api/metric/${values.metric}/value`, { token: admin.token, body: { value: 3 } });
  const failures: string[] = [];
  for (const op of ops.filter((o) => o.method === "GET" && GROUPS.test(o.path))) {
    const path = pathWith(op, values);
    if (!path) { failures.push(`no path ${op.path}`); continue; }
    const res = await t.req("GET", path, { token: admin.token });
    if (res.status !== 200 || typeof res.body !== "object" || !res.body || !("total" in res.body)) continue;
    const keys = Object.keys(res.body).sort().join(",");
    if (keys !== "items,limit,page,total") failures.push(`${op.path}: keys ${keys}`);
    if (!Array.isArray(res.body.items)) { failures.push(`${op.path}: ${res.text.slice(0,200)}`); continue; }
    const item = res.body.items[0];
    if (!item) { failures.push(`${op.path}: empty`); continue; }
    const sep = path.includes("?") ? "&" : "?";
    for (const [k, v] of Object.entries(item)) {
      if (v !== null && typeof v === "object") continue;
      for (const s of [k, `-${k}`]) {
        const r = await t.req("GET", `${path}${sep}sort=${s}`, { token: admin.token });
        if (r.status !== 200) failures.push(`${op.path} sort=${s}: ${r.status} ${r.text.slice(0, 120)}`);
      }
      if (v === null) continue;
      const r = await t.req("GET", `${path}${sep}${k}=${encodeURIComponent(String(v))}`, { token: admin.token });
      if (r.status !== 200) failures.push(`${op.path} ${k}=${v}: ${r.status} ${r.text.slice(0, 120)}`);
      else if (!r.body.items.some((i: any) => JSON.stringify(i) === JSON.stringify(item))) failures.push(`${op.path} ${k}=${v}: item not found (${r.body.total})`);
    }
    for (const [q, field] of [["sort=bogus", "sort"], ["bogus=1", "bogus"], ["limit=0", "limit"], ["limit=501", "limit"], ["page=0", "page"]]) {
      const r = await t.req("GET", `${path}${sep}${q}`, { token: admin.token });
      if (r.status !== 400 || !r.body.errors?.some((e: any) => e.path === field)) failures.push(`${op.path} ${q}: ${r.status} ${r.text.slice(0, 160)}`);
    }
  }
  console.log(failures.join("\n"));
  expect(failures).toEqual([]);
}, 60000);
