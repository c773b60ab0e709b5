// The notepad (routes.md, Core: Notepad): notes private to their author, per corporation.
import { describe, expect, test } from "bun:test";
import { addCorp, addMember, addUser, UNKNOWN_ID, openApp } from "../../support/helpers";

const { t, admin } = await openApp();

describe("GET|POST /api/notepad; GET /api/notepad/{id}: notepad", () => {
  test("create, recover the list and one note", async () => {
    const u = await addUser(t, admin.corpId);
    const res = await t.req("POST", "/api/notepad", { token: u.token, body: { title: "Groceries", content: "milk\neggs" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("location")).toBe(`/api/notepad/${res.body.id}`);
    expect(res.body).toMatchObject({ title: "Groceries", content: "milk\neggs", user_id: u.userId });
    expect(Object.keys(res.body).sort()).toEqual(["content", "created_at", "id", "title", "updated_at", "user_id"]);
    const untitled = await t.req("POST", "/api/notepad", { token: u.token, body: { content: "call the NOC" } });
    expect(untitled.body.title).toBeNull();

    const list = await t.req("GET", "/api/notepad", { token: u.token });
    expect(list.status).toBe(200);
    expect(list.body.items.map((n: { id: string }) => n.id)).toEqual([res.body.id, untitled.body.id]);
    expect((await t.req("GET", "/api/notepad?q=noc", { token: u.token })).body.items.map((n: { id: string }) => n.id)).toEqual([untitled.body.id]);
    expect((await t.req("GET", "/api/notepad?sort=-id&limit=1", { token: u.token })).body.items[0].id).toBe(untitled.body.id);
    const one = await t.req("GET", `/api/notepad/${res.body.id}`, { token: u.token });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(res.body);
  });

  test("notes are private to their author, per corporation", async () => {
    const alice = await addUser(t, admin.corpId, { login: "alice" });
    const bob = await addUser(t, admin.corpId, { login: "bob" });
    const note = (await t.req("POST", "/api/notepad", { token: alice.token, body: { content: "alice's" } })).body;
    expect((await t.req("GET", `/api/notepad/${note.id}`, { token: bob.token })).status).toBe(404);
    expect((await t.req("GET", "/api/notepad", { token: bob.token })).body.total).toBe(0);
    // filtering by another user id finds nothing either
    expect((await t.req("GET", `/api/notepad?user_id=${alice.userId}`, { token: bob.token })).body.total).toBe(0);

    // the same author working in another corporation sees that corporation's notes only
    const other = await addCorp(t, "notes-other");
    await addMember(t, other, alice.userId);
    const there = await t.req("POST", "/api/auth/corp", { token: alice.token, body: { corp: "notes-other" } });
    expect(there.status).toBe(200);
    const token = there.body.access_token;
    expect((await t.req("GET", "/api/notepad", { token })).body.total).toBe(0);
    expect((await t.req("GET", `/api/notepad/${note.id}`, { token })).status).toBe(404);
    const otherNote = (await t.req("POST", "/api/notepad", { token, body: { content: "elsewhere" } })).body;
    expect(t.sql(other).query("SELECT id FROM notes").all()).toEqual([{ id: otherNote.id }]);
    expect(t.sql(admin.corpId).query("SELECT id FROM notes WHERE id = ?").get(otherNote.id)).toBeNull();
  });

  test("400 content missing or too long, title too long; 401; 404 unknown", async () => {
    const u = await addUser(t, admin.corpId);
    const missing = await t.req("POST", "/api/notepad", { token: u.token, body: { title: "t" } });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].path).toBe("content");
    const long = await t.req("POST", "/api/notepad", { token: u.token, body: { title: "x".repeat(201), content: "c" } });
    expect(long.body.errors[0].path).toBe("title");
    // 64 KiB counts UTF-8 bytes: 30,000 three-byte characters are 90,000 bytes
    const wide = await t.req("POST", "/api/notepad", { token: u.token, body: { content: "€".repeat(30_000) } });
    expect(wide.status).toBe(400);
    expect(wide.body.errors[0].path).toBe("content");
    expect((await t.req("POST", "/api/notepad", { token: u.token, body: { content: "a".repeat(65_536) } })).status).toBe(200);
    expect((await t.req("POST", "/api/notepad", { body: { content: "c" } })).status).toBe(401);
    expect((await t.req("GET", "/api/notepad")).status).toBe(401);
    expect((await t.req("GET", `/api/notepad/${UNKNOWN_ID}`)).status).toBe(401);
    expect((await t.req("GET", `/api/notepad/${UNKNOWN_ID}`, { token: u.token })).status).toBe(404);
    expect((await t.req("GET", "/api/notepad/not-a-uuid", { token: u.token })).status).toBe(404);
  });
});
