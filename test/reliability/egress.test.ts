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

test("IPv6 spellings that embed or reach a refused IPv4 address are refused; their allowed cousins are not", () => {
  const p = new EgressPolicy([], []);
  const refused = [
    "::127.0.0.1", // IPv4-compatible
    "::7f00:1",
    "::ffff:127.0.0.1", // mapped
    "::ffff:0:127.0.0.1", // translated
    "64:ff9b::127.0.0.1", // NAT64
    "64:ff9b::a9fe:a9fe",
    "64:ff9b:1:7f00:0:100::", // local-use NAT64, /48 embedding
    "64:ff9b:1::7f00:1", // local-use NAT64, /96 embedding
    "2002:7f00:1::", // 6to4
    "2002:a9fe:a9fe::1",
    "2001:0:7f00:1::", // Teredo server
    "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo client 127.0.0.1, stored inverted
    "::",
    "::1",
    "::0.0.0.2",
    "ff02::1",
    "::e000:1",
    "224.0.0.1",
    "255.255.255.255",
    "100::1",
  ];
  for (const a of refused) expect({ a, allowed: p.allows(a) }).toEqual({ a, allowed: false });
  for (const a of ["::ffff:10.1.2.3", "::10.1.2.3", "64:ff9b::8.8.8.8", "2002:808:808::1", "2001:0:808:808::f7f7:f7f7", "2001:db8::1", "fd12::1"]) {
    expect({ a, allowed: p.allows(a) }).toEqual({ a, allowed: true });
  }
  // the allow and deny lists judge the embedded address too
  expect(new EgressPolicy(["127.0.0.0/8"], []).allows("::127.0.0.1")).toBe(true);
  expect(new EgressPolicy([], ["10.0.0.0/8"]).allows("64:ff9b::10.1.2.3")).toBe(false);
  expect(new EgressPolicy([], ["10.0.0.0/8"]).allows("2002:a01:203::1")).toBe(false);
});

test("a URL with an IPv4-compatible IPv6 literal is refused before connecting", async () => {
  for (const host of ["[::127.0.0.1]", "[::7f00:1]", "[::ffff:7f00:1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::1]"]) {
    await expect(new EgressPolicy([], []).fetch(`http://${host}:${server.port}/`, { timeoutMs: 2000 })).rejects.toBeInstanceOf(EgressRefused);
  }
});
