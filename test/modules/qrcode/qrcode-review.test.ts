// Conformance review of the QR code lists: every scalar field of a QrAccess sorts and filters.
import { describe, expect, test } from "bun:test";
import { openApp } from "../../support/helpers";
import { waitFor } from "../../support/wait";

const { t, admin } = await openApp();
const api = (method: string, path: string) => t.req(method, path, { token: admin.token });

describe("GET /api/qrcode/{id}/accesses", () => {
  test("sorts and filters by created_at and updated_at, the fields it shows", async () => {
    const code = (await t.req("POST", "/api/qrcode", { token: admin.token, body: { name: "scan-me", kind: "dynamic", target: "https://example.com/x" } })).body;
    for (const ip of ["203.0.113.7", "203.0.113.8"]) {
      expect((await t.req("GET", `/q/${code.slug}`, { ip, headers: { "user-agent": "Mozilla/5.0" } })).status).toBe(302);
      await Bun.sleep(5);
    }
    // The recorder writes accesses in batches.
    const list = await waitFor("the scans written", async () => {
      const res = await api("GET", `/api/qrcode/${code.id}/accesses`);
      return res.body.total >= 2 && res;
    });
    expect(list.body.total).toBe(2);
    const [newest, oldest] = list.body.items;
    for (const field of ["created_at", "updated_at"]) {
      const asc = await api("GET", `/api/qrcode/${code.id}/accesses?sort=${field}`);
      expect(asc.status).toBe(200);
      expect(asc.body.items.map((a: any) => a.id)).toEqual([oldest.id, newest.id]);
      const one = await api("GET", `/api/qrcode/${code.id}/accesses?${field}=${encodeURIComponent(oldest[field])}`);
      expect(one.status).toBe(200);
      expect(one.body.items.map((a: any) => a.id)).toEqual([oldest.id]);
    }
  });
});
