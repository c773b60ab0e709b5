// Lists refuse what they cannot serve, whatever the schema layer let through: page and limit out of
// range, field names every JavaScript object inherits, and date ranges the date arithmetic cannot
// represent — a 400 naming the field, never a 500 or every row.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cities } from "../../src/db/tenant/schema";
import { listClauses, MAX_PAGE, paging } from "../../src/db/list";
import { Problem } from "../../src/lib/problem";
import { makeApp, startAndLogin, type TestApp } from "../support/helpers";

const INHERITED = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "prototype", "isPrototypeOf", "__defineGetter__"];

function refusal(fn: () => unknown): { status: number; field: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof Problem) return { status: err.status, field: err.errors?.[0]?.path ?? "" };
    throw err;
  }
  throw new Error("accepted");
}

describe("db/list on its own (what reaches it when validation is skipped)", () => {
  test("page and limit: whole numbers in 1..MAX_PAGE and 1..500, as numbers or as the raw text", () => {
    for (const limit of [-1, 0, 501, 1e6, 1e308, Infinity, NaN, 1.5, "-1", "0", "501", "1e6", "1e308", "0x10", " 1", "", "abc"]) {
      expect(refusal(() => paging({ limit }))).toEqual({ status: 400, field: "limit" });
    }
    for (const page of [-1, 0, MAX_PAGE + 1, 1e20, "1e20", "9007199254740993", "-0", "Infinity"]) {
      expect(refusal(() => paging({ page }))).toEqual({ status: 400, field: "page" });
    }
    expect(paging({})).toEqual({ page: 1, limit: 50, offset: 0 });
    expect(paging({ page: "3", limit: "500" })).toEqual({ page: 3, limit: 500, offset: 1000 });
    const last = paging({ page: MAX_PAGE, limit: 500 });
    expect(Number.isSafeInteger(last.offset)).toBe(true);
  });

  test("inherited property names are unknown fields, as filters and as sort keys", () => {
    for (const name of INHERITED) {
      expect(refusal(() => listClauses(cities, { q: [] }, { [name]: "1" }))).toEqual({ status: 400, field: name });
      expect(refusal(() => listClauses(cities, { q: [] }, { sort: name }))).toEqual({ status: 400, field: "sort" });
      expect(refusal(() => listClauses(cities, { q: [] }, { sort: `-${name}` }))).toEqual({ status: 400, field: "sort" });
      const computed = { extra: { expr: cities.name, dataType: "string" as const } };
      expect(refusal(() => listClauses(cities, { q: [], computed }, { sort: name }))).toEqual({ status: 400, field: "sort" });
    }
  });
});

describe("over HTTP", () => {
  let t: TestApp;
  let token: string;
  let code: string;
  let metric: string;
  beforeAll(async () => {
    t = await makeApp();
    token = (await startAndLogin(t)).token;
    for (const name of ["Alpha", "Beta", "Gamma"]) await t.req("POST", "/api/city", { token, body: { name, state: "SP", country: "BR" } });
    code = (await t.req("POST", "/api/qrcode", { token, body: { name: "bounds", kind: "dynamic", target: "https://example.com/b" } })).body.id;
    metric = (
      await t.req("POST", "/api/metric", {
        token,
        body: { name: "bounds", endpoint: "https://collector.example.net/x", data_type: "Int", periodicity: "5m", start_date: "2025-01-01T00:00:00-03:00" },
      })
    ).body.id;
    expect(code).toBeString();
    expect(metric).toBeString();
  });
  afterAll(() => t.close());

  async function expect400(path: string, field: string) {
    const res = await t.req("GET", path, { token });
    expect({ path, status: res.status }).toEqual({ path, status: 400 });
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
  }

  test("?limit and ?page out of range: 400 naming them, not every row", async () => {
    for (const limit of ["-1", "0", "501", "1e6", "1e308"]) {
      await expect400(`/api/city?limit=${limit}`, "limit");
      await expect400(`/api/metric/${metric}/history?limit=${limit}`, "limit");
      await expect400(`/api/qrcode/logo?limit=${limit}`, "limit");
    }
    for (const page of ["0", "-1", "1e20", String(MAX_PAGE + 1)]) {
      await expect400(`/api/city?page=${page}`, "page");
      await expect400(`/api/metric/${metric}/history?page=${page}`, "page");
    }
    const ok = await t.req("GET", `/api/city?page=${MAX_PAGE}&limit=500`, { token });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ items: [], page: MAX_PAGE, limit: 500, total: 3 });
  });

  test("inherited property names as filter and sort keys: 400 unknown field", async () => {
    for (const name of INHERITED) {
      await expect400(`/api/city?${encodeURIComponent(name)}=1`, name);
      await expect400(`/api/city?sort=${encodeURIComponent(name)}`, "sort");
      await expect400(`/api/qrcode?sort=-${encodeURIComponent(name)}`, "sort");
      await expect400(`/api/qrcode/${code}/accesses?sort=${encodeURIComponent(name)}`, "sort");
    }
  });

  test("QR report, accesses and export: dates the arithmetic cannot represent are 400 naming the field", async () => {
    for (const [field, value] of [
      ["to", "9999-12-31"],
      ["from", "9999-12-31"],
      ["from", "0001-01-01"],
      ["to", "9999-12-31T23:59:59-14:00"],
      ["from", "1969-12-31T23:59:59Z"],
    ]) {
      const q = `${field}=${encodeURIComponent(value)}`;
      await expect400(`/api/qrcode/report?${q}`, field);
      await expect400(`/api/qrcode/${code}/report?${q}`, field);
      await expect400(`/api/qrcode/${code}/accesses?${q}`, field);
      await expect400(`/api/qrcode/${code}/accesses/export?format=csv&${q}`, field);
    }
    // The edges of the range still answer.
    for (const path of [`/api/qrcode/report?from=1970-01-01&to=1970-01-31`, `/api/qrcode/${code}/accesses?from=1970-01-01&to=9999-12-30`, `/api/qrcode/${code}/report?from=9999-12-01&to=9999-12-30`]) {
      expect((await t.req("GET", path, { token })).status).toBe(200);
    }
  });
});
