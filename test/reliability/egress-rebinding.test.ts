// DNS rebinding: the name is resolved once, checked, and the request goes to that checked
// address; an answer that changes afterwards (to a refused address) is never asked for or used.
// Two servers share a port: 127.0.0.1 (allowed here) answers "checked", 127.0.0.2 (refused)
// answers "refused".
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { EgressPolicy, EgressRefused, type HostResolver } from "../../src/lib/egress";

const TLS = join(import.meta.dir, "../support/tls");
const NAME = "hooks.corpadmin.test"; // the name the fixture certificate is for
const ca = await Bun.file(join(TLS, "ca.pem")).text();
const tls = { cert: Bun.file(join(TLS, "leaf.pem")), key: Bun.file(join(TLS, "leaf.key")) };
const answer = (label: string) => (r: Request) => new Response(`${label} ${r.headers.get("host")}`);

const servers: ReturnType<typeof Bun.serve>[] = [];
let httpPort = 0;
let httpsPort = 0;
beforeAll(() => {
  const a = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: answer("checked") });
  httpPort = a.port!;
  const b = Bun.serve({ port: 0, hostname: "127.0.0.1", tls, fetch: answer("checked") });
  httpsPort = b.port!;
  servers.push(a, b);
  servers.push(Bun.serve({ port: httpPort, hostname: "127.0.0.2", fetch: answer("refused") }));
  servers.push(Bun.serve({ port: httpsPort, hostname: "127.0.0.2", tls, fetch: answer("refused") }));
});
afterAll(() => servers.forEach((s) => s.stop(true)));

/** Answers the allowed address the first time, the refused one every time after. */
function rebinding(): HostResolver & { calls: number } {
  const r = Object.assign(async () => (r.calls++ === 0 ? ["127.0.0.1"] : ["127.0.0.2"]), { calls: 0 });
  return r;
}
const policy = (resolver: HostResolver) => new EgressPolicy(["127.0.0.1/32"], [], resolver);

test("the refused address of the second answer is refused when it is the one checked", async () => {
  expect(await policy(async () => ["127.0.0.2"]).fetch(`http://rebind.test:${httpPort}/`, { timeoutMs: 2000 }).catch((e) => e)).toBeInstanceOf(EgressRefused);
});

test("http: the request reaches the checked address, with the URL's Host", async () => {
  const resolver = rebinding();
  const p = policy(resolver);
  const res = await p.fetch(`http://rebind.test:${httpPort}/`, { timeoutMs: 2000 });
  expect(await res.text()).toBe(`checked rebind.test:${httpPort}`);
  expect(resolver.calls).toBe(1);
  // the next request resolves afresh, checks the rebound answer and refuses it
  expect(await p.fetch(`http://rebind.test:${httpPort}/`, { timeoutMs: 2000 }).catch((e) => e)).toBeInstanceOf(EgressRefused);
});

test("https: the request reaches the checked address, the certificate checked against the URL's name", async () => {
  const resolver = rebinding();
  const res = await policy(resolver).fetch(`https://${NAME}:${httpsPort}/`, { timeoutMs: 2000, tls: { ca } });
  expect(await res.text()).toBe(`checked ${NAME}:${httpsPort}`);
  expect(resolver.calls).toBe(1);
});

test("https: a certificate not for the URL's name is refused although the address is allowed", async () => {
  const err = await policy(async () => ["127.0.0.1"]).fetch(`https://other.corpadmin.test:${httpsPort}/`, { timeoutMs: 2000, tls: { ca } }).catch((e) => e);
  expect(err).toBeInstanceOf(Error);
  expect(err).not.toBeInstanceOf(EgressRefused);
  expect(String(err.code ?? err.message)).toContain("ALTNAME");
});

test("a refused connection moves on to the next checked address; every address is checked first", async () => {
  const p = new EgressPolicy(["127.0.0.1/32", "127.0.0.3/32"], [], async () => ["127.0.0.3", "127.0.0.1"]); // nothing listens on .3
  expect(await (await p.fetch(`http://two.test:${httpPort}/`, { timeoutMs: 2000 })).text()).toBe(`checked two.test:${httpPort}`);
  expect(await (await p.fetch(`https://${NAME}:${httpsPort}/`, { timeoutMs: 2000, tls: { ca } })).text()).toBe(`checked ${NAME}:${httpsPort}`);
  const mixed = new EgressPolicy(["127.0.0.1/32"], [], async () => ["127.0.0.1", "127.0.0.2"]);
  expect(await mixed.fetch(`http://two.test:${httpPort}/`, { timeoutMs: 2000 }).catch((e) => e)).toBeInstanceOf(EgressRefused);
});
