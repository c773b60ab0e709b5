import { afterAll, beforeAll, expect, test } from "bun:test";
import { EgressPolicy, EgressRefused } from "../../src/lib/egress";

let server: ReturnType<typeof Bun.serve>;
beforeAll(() => {
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => (new URL(r.url).pathname === "/redirect" ? Response.redirect("http://example.com/", 302) : new Response(r.headers.get("host"))) });
});
afterAll(() => server.stop(true));

test("defaults refuse loopback, link-local, metadata and unspecified; allow private networks", () => {
  const p = new EgressPolicy([], []);
  for (const a of ["127.0.0.1", "::1", "169.254.169.254", "fe80::1", "0.0.0.0", "::ffff:127.0.0.1"]) expect(p.allows(a)).toBe(false);
  for (const a of ["10.1.2.3", "192.168.0.10", "172.16.5.5", "8.8.8.8", "2001:db8::1"]) expect(p.allows(a)).toBe(true);
});

test("allow re-opens a default, deny always wins", () => {
  const p = new EgressPolicy(["127.0.0.0/8"], ["10.0.0.0/8", "127.0.0.2/32"]);
  expect(p.allows("127.0.0.1")).toBe(true);
  expect(p.allows("127.0.0.2")).toBe(false);
  expect(p.allows("10.9.9.9")).toBe(false);
});

test("a DNS name resolving to a refused address is refused; with loopback allowed it connects", async () => {
  const url = `http://localhost:${server.port}/x`;
  await expect(new EgressPolicy([], []).fetch(url, { timeoutMs: 2000 })).rejects.toBeInstanceOf(EgressRefused);
  const res = await new EgressPolicy(["127.0.0.0/8", "::1/128"], []).fetch(url, { timeoutMs: 2000 });
  expect(res.status).toBe(200);
  expect(await res.text()).toBe(`localhost:${server.port}`);
});

test("redirects are not followed", async () => {
  const res = await new EgressPolicy(["127.0.0.0/8"], []).fetch(`http://127.0.0.1:${server.port}/redirect`, { timeoutMs: 2000 });
  expect(res.status).toBe(302);
});
