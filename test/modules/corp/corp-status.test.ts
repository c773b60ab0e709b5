// Status transitions and the corporation gate: what each status does to login, refresh, change of
// corporation and to sessions already working in the corporation.
import { describe, expect, test } from "bun:test";
import { ADMIN, addCorp, addMember, addUser, UNKNOWN_ID, openApp } from "../../support/helpers";

const { t, admin } = await openApp();

const GATES = [
  ["block", "BLOCKED", 403],
  ["maintenance", "MAINTENANCE", 503],
  ["needs-update", "NEEDS_UPDATE", 503],
] as const;

function expectGate(res: { status: number; body: any; headers: Headers }, status: number) {
  expect(res.status).toBe(status);
  if (status === 403) expect(res.body.type).toBe("urn:corpadmin:problem:corp-blocked");
  else {
    expect(res.body.type).toBe("urn:corpadmin:problem:unavailable");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
  }
}

describe.each(GATES)("POST /api/corp/{id}/%s", (path, status, gate) => {
  test(`sets ${status}; tokens into it are refused (${gate}); sessions there get ${gate} on tenant rows only; enable undoes it`, async () => {
    const id = await addCorp(t, `gate-${path}`);
    const name = `gate-${path}`;
    const member = await addUser(t, id, { login: `member-${path}` });
    // a member of acme too, to try changing into the gated corporation
    await addMember(t, admin.corpId, member.userId);
    const atAcme = await t.req("POST", "/api/login", { body: { corp: "acme", login: member.login, password: member.password } });
    expect(atAcme.status).toBe(200);
    const superThere = await t.req("POST", "/api/auth/corp", { token: (await t.req("POST", "/api/login", { body: { corp: "acme", login: ADMIN.login, password: ADMIN.password } })).body.access_token, body: { corp: name } });
    expect(superThere.status).toBe(200);
    // sessions already working there before the change
    expect((await t.req("POST", "/api/notepad", { token: member.token, body: { content: "before" } })).status).toBe(200);
    const memberRefresh = member.token;

    const res = await admin.req("POST", `/api/corp/${id}/${path}`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(id);
    expect(res.body.status).toBe(status);
    expect((await admin.req("GET", `/api/corp/${id}`)).body.status).toBe(status);

    // login
    expectGate(await t.req("POST", "/api/login", { body: { corp: name, login: member.login, password: member.password } }), gate);
    // existing session: tenant rows gated, platform rows not
    expectGate(await t.req("GET", "/api/notepad", { token: member.token }), gate);
    expectGate(await t.req("POST", "/api/notepad", { token: member.token, body: { content: "during" } }), gate);
    expect((await t.req("GET", "/api/auth/credentials", { token: member.token })).status).toBe(200);
    expect((await t.req("GET", "/api/core/versions", { token: member.token })).status).toBe(200);
    // refresh
    expectGate(await t.req("GET", "/api/auth/refresh", { token: memberRefresh }), gate);
    // change of corporation into it
    expectGate(await t.req("POST", "/api/auth/corp", { token: atAcme.body.access_token, body: { corp: name } }), gate);
    // `*` is exempt everywhere
    expect((await t.req("GET", "/api/notepad", { token: superThere.body.access_token })).status).toBe(200);
    expect((await t.req("POST", "/api/login", { body: { corp: name, login: ADMIN.login, password: ADMIN.password } })).status).toBe(200);
    // the public check reports it
    expect((await t.req("POST", "/api/corp/check", { body: { auth_name: name } })).body).toMatchObject({ status, usable: false });

    const enabled = await admin.req("POST", `/api/corp/${id}/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body.status).toBe("ENABLED");
    expect((await t.req("GET", "/api/notepad", { token: member.token })).body.items.map((n: { content: string }) => n.content)).toEqual(["before"]);
    expect((await t.req("POST", "/api/login", { body: { corp: name, login: member.login, password: member.password } })).status).toBe(200);
    const refreshed = await t.req("GET", "/api/auth/refresh", { token: member.token });
    expect(refreshed.status).toBe(200);
    expect((await t.req("POST", "/api/auth/corp", { token: atAcme.body.access_token, body: { corp: name } })).status).toBe(200);
  });
});

describe("POST /api/corp/{id}/enable|block|maintenance: transitions", () => {
  test("any status moves to any other", async () => {
    const id = await addCorp(t, "hopper");
    const seen: string[] = [];
    for (const path of ["block", "maintenance", "needs-update", "block", "enable", "enable", "needs-update", "maintenance"]) {
      const res = await admin.req("POST", `/api/corp/${id}/${path}`);
      expect(res.status).toBe(200);
      seen.push(res.body.status);
    }
    expect(seen).toEqual(["BLOCKED", "MAINTENANCE", "NEEDS_UPDATE", "BLOCKED", "ENABLED", "ENABLED", "NEEDS_UPDATE", "MAINTENANCE"]);
  });

  test("401, 403 for anyone but `*`, 404 unknown", async () => {
    const u = await addUser(t, admin.corpId, { login: "status-corp-admin", services: ["platform.corp"] });
    for (const path of ["enable", "block", "maintenance", "needs-update"]) {
      expect((await t.req("POST", `/api/corp/${admin.corpId}/${path}`)).status).toBe(401);
      expect((await t.req("POST", `/api/corp/${admin.corpId}/${path}`, { token: u.token })).status).toBe(403);
      expect((await admin.req("POST", `/api/corp/${UNKNOWN_ID}/${path}`)).status).toBe(404);
    }
    expect((await admin.req("GET", `/api/corp/${admin.corpId}`)).body.status).toBe("ENABLED");
  });
});
