// Issue 29 defect 3: `corpadmin freeradius-config` writes the FreeRADIUS configuration from the
// command line (the binary in the binary pass), and Debian's FreeRADIUS 3.2, started on the files
// it wrote, authorizes and accounts through this app: as README's Debian recipe runs it (as the
// freerad user, which may only read the files: group freerad, 0640), with
// the NAS secret and with an external app's API key. Bad flags: exit 2 naming the flag, nothing written.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chownSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serveCommand } from "../support/app-node";
import { FREERADIUS_MISSING, freeUdpPort, radclient, runFreeradius, type FreeradiusProcess } from "../support/freeradius-harness";
import { makeApp, startAndLogin, tempDir, type TestApp } from "../support/helpers";
import { contractWith, mikrotikLayout, must } from "../support/isp";

if (FREERADIUS_MISSING) console.warn(`skipping the FreeRADIUS runs of freeradius-config: ${FREERADIUS_MISSING}`);

const RADIUS_SECRET = "cli-shared-secret,with comma";
const NAS_IP = "192.0.2.20";
/** `corpadmin` of this pass (the binary, or `bun src/main.ts`). */
const CORPADMIN = serveCommand().slice(0, -1);
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function corpadmin(...args: string[]) {
  const p = Bun.spawnSync([...CORPADMIN, ...args], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

const asRoot = process.getuid?.() === 0;
const freerad = (() => {
  const p = Bun.spawnSync(["id", "-u", "freerad"], { stdout: "pipe", stderr: "pipe" });
  return p.exitCode === 0 ? { uid: Number(p.stdout.toString()), gid: Number(Bun.spawnSync(["id", "-g", "freerad"], { stdout: "pipe" }).stdout.toString()) } : null;
})();

describe.skipIf(FREERADIUS_MISSING !== null)("corpadmin freeradius-config: FreeRADIUS on the files it writes", () => {
  let t: TestApp;
  let admin: { token: string; corpId: string };
  let running: FreeradiusProcess[] = [];

  beforeAll(async () => {
    t = await makeApp();
    admin = await startAndLogin(t);
    const { layout } = await mikrotikLayout(t, admin.token);
    await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-cli", ip: NAS_IP, secret: RADIUS_SECRET, layout_id: layout.id });
    await contractWith(t, admin.token, { username: "ana@isp", password: "ana-pass", max_upload: "20M", max_download: "200M", pool_name_ipv4: "pppoe-cli" });
  });
  afterAll(async () => {
    for (const r of running) await r.stop();
    await t?.close();
  });

  /** A directory the freerad user can reach (the test's temp root may be 0700). */
  const radiusDir = () => {
    const d = tempDir("corpadmin-fr-cli-");
    dirs.push(d);
    if (asRoot && freerad) chownSync(d, 0, freerad.gid);
    Bun.spawnSync(["chmod", "0750", d]);
    return d;
  };

  test("--corp (each NAS's RADIUS secret), as Debian runs it: as freerad, files root:freerad 0640; Access-Accept and accounting", async () => {
    const root = radiusDir();
    const out = join(root, "corpadmin");
    const [auth, acct] = [await freeUdpPort(), await freeUdpPort()];
    const r = corpadmin("freeradius-config", "--out", out, "--url", t.listen(), "--corp", "acme", "--client", `bng,127.0.0.1,${RADIUS_SECRET}`, "--listen", "127.0.0.1", "--auth-port", String(auth), "--acct-port", String(acct));
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain(`wrote ${out}`);
    expect(r.out).toContain(`freeradius -f -l stdout -d ${out}`);
    // Secrets inside: no file is readable by others.
    expect(statSync(join(out, "sites-enabled/corpadmin")).mode & 0o777).toBe(0o640);
    expect(statSync(join(out, "mods-enabled/rest")).mode & 0o777).toBe(0o640);
    expect(statSync(out).mode & 0o777).toBe(0o750);
    if (asRoot && freerad) Bun.spawnSync(["chgrp", "-R", "freerad", out]);
    const radius = await runFreeradius(out, asRoot && freerad ? { user: "freerad" } : {});
    running.push(radius);
    const ok = await radclient(auth, "auth", RADIUS_SECRET, { "NAS-IP-Address": NAS_IP, "User-Name": "ana@isp", "User-Password": "ana-pass" });
    expect(ok.code).toBe("Access-Accept");
    expect(ok.attributes["Mikrotik-Rate-Limit"]).toEqual(["20M/200M"]);
    expect(ok.attributes["Framed-Pool"]).toEqual(["pppoe-cli"]);
    const bad = await radclient(auth, "auth", RADIUS_SECRET, { "NAS-IP-Address": NAS_IP, "User-Name": "ana@isp", "User-Password": "wrong" });
    expect(bad.code).toBe("Access-Reject");
    const started = await radclient(acct, "acct", RADIUS_SECRET, { "NAS-IP-Address": NAS_IP, "User-Name": "ana@isp", "Acct-Session-Id": "cli-1", "Acct-Status-Type": "Start" });
    expect(started.code).toBe("Accounting-Response");
    // Run in the foreground it wrote nothing into its (read-only) configuration directory.
    expect(readdirSync(join(out, "run"))).toEqual([]);
    expect(readdirSync(join(out, "log"))).toEqual([]);
  });

  test("--key (an external app's API key), written again over the same directory", async () => {
    const app = await must(t, admin.token, "POST", "/api/externalapp", { name: "freeradius-cli" });
    const out = join(radiusDir(), "keyed");
    const [auth, acct] = [await freeUdpPort(), await freeUdpPort()];
    const args = ["freeradius-config", "--out", out, "--url", t.listen(), "--key", app.api_key, "--client", "bng,127.0.0.0/8,another-secret", "--listen", "127.0.0.1", "--auth-port", String(auth), "--acct-port", String(acct)];
    expect(corpadmin(...args).code).toBe(0);
    // A directory corpadmin wrote is written again (new settings), not refused.
    const again = corpadmin(...args);
    expect(again.err).toBe("");
    expect(again.code).toBe(0);
    const radius = await runFreeradius(out);
    running.push(radius);
    const ok = await radclient(auth, "auth", "another-secret", { "NAS-IP-Address": NAS_IP, "User-Name": "ana@isp", "User-Password": "ana-pass" });
    expect(ok.code).toBe("Access-Accept");
    expect(ok.attributes["Mikrotik-Rate-Limit"]).toEqual(["20M/200M"]);
    expect((await radclient(acct, "acct", "another-secret", { "NAS-IP-Address": NAS_IP, "User-Name": "ana@isp", "Acct-Session-Id": "cli-2", "Acct-Status-Type": "Start" })).code).toBe("Accounting-Response");
  });
});

describe("corpadmin freeradius-config: bad flags", () => {
  test("each is exit 2 naming the flag, and nothing is written", () => {
    const root = tempDir("corpadmin-fr-bad-");
    dirs.push(root);
    const out = join(root, "out");
    const base = ["freeradius-config", "--out", out];
    const cases: [string[], string][] = [
      [["freeradius-config", "--corp", "acme", "--client", "a,10.0.0.1,s"], "--out DIR is required"],
      [[...base, "--corp", "acme"], "--client"],
      [[...base, "--corp", "acme", "--client", "a,10.0.0.999,s"], "not an IP address"],
      [[...base, "--corp", "acme", "--client", "bad name,10.0.0.1,s"], "the name may hold"],
      [[...base, "--corp", "acme", "--client", "a,10.0.0.1"], "NAME,ADDRESS,SECRET"],
      [[...base, "--corp", "acme", "--client", "a,10.0.0.1,s", "--client", "a,10.0.0.2,t"], "given twice"],
      [[...base, "--client", "a,10.0.0.1,s"], "a credential is required"],
      [[...base, "--corp", "acme", "--key", "a.b.c", "--client", "a,10.0.0.1,s"], "exclude each other"],
      [[...base, "--key", "not-a-key", "--client", "a,10.0.0.1,s"], "--key must be"],
      [[...base, "--corp", "acme", "--client", "a,10.0.0.1,s", "--url", "ftp://x"], "--url must be"],
      [[...base, "--corp", "acme", "--client", "a,10.0.0.1,s", "--auth-port", "70000"], "--auth-port"],
    ];
    for (const [args, message] of cases) {
      const r = corpadmin(...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err, args.join(" ")).toContain(message);
    }
    expect(existsSync(out)).toBe(false);
  });

  test("a directory it did not write (Debian's stock tree) is never overwritten", () => {
    const stock = tempDir("corpadmin-fr-stock-");
    dirs.push(stock);
    writeFileSync(join(stock, "radiusd.conf"), "# stock radiusd.conf\n");
    const r = corpadmin("freeradius-config", "--out", stock, "--corp", "acme", "--client", "a,10.0.0.1,s");
    expect(r.code).toBe(2);
    expect(r.err).toContain("corpadmin did not write it");
    expect(readFileSync(join(stock, "radiusd.conf"), "utf8")).toBe("# stock radiusd.conf\n");
    expect(readdirSync(stock)).toEqual(["radiusd.conf"]);
  });

  test("corpadmin help lists it; --help explains its flags", () => {
    expect(corpadmin("help").out).toContain("freeradius-config --out DIR");
    const help = corpadmin("freeradius-config", "--help");
    expect(help.code).toBe(0);
    for (const flag of ["--out", "--client", "--corp", "--nas-secret", "--key", "--url", "--listen"]) expect(help.out).toContain(flag);
  });
});
