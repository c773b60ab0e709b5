// source-only: moves the app's clock (options.now) past a usage cycle's end and a trust unblock's grace; the binary's clock cannot be moved.
// Fair use on the wire, the parts that wait for time (issue 33): the next cycle restores a throttled
// contract, and the end of a trust unblock's grace returns a SUSPENDED contract to its suspension,
// each found by the `fair-use` job (run with POST /api/system/jobs/fair-use/run) and sent to
// FreeRADIUS as the NAS's RFC 5176 listener. The rest is in fair-use-freeradius.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, startAndLogin, type TestApp } from "../../support/helpers";
import { contractWith, must } from "../../support/isp";
import { FREERADIUS_MISSING, radclient, startFreeradius, type RunningFreeradius } from "../../support/freeradius-harness";
import { startFreeradiusCoa, type CoaListener } from "../../support/coa-harness";
import { fairUseLayout, wireLines } from "../../support/fair-use";
import { waitFor } from "../../support/wait";

if (FREERADIUS_MISSING) console.warn(`skipping the fair-use FreeRADIUS end-to-end tests that move the clock: ${FREERADIUS_MISSING}`);

const SECRET = "fair-use-secret-02";
const NAS_IP = "127.0.0.1";
const FRAMED_IP = "100.64.0.10";
const DAY_MS = 86_400_000;

describe.skipIf(FREERADIUS_MISSING !== null)("the fair-use job on the wire: the next cycle restores, a grace's end suspends again", () => {
  let t: TestApp;
  let admin: { token: string; corpId: string };
  let radius: RunningFreeradius;
  let nas: CoaListener;
  let wire: ReturnType<typeof wireLines>;
  let clockOffset = 0;

  beforeAll(async () => {
    nas = await startFreeradiusCoa(SECRET);
    wire = wireLines(nas);
    t = await makeApp({ options: { now: () => Date.now() + clockOffset, dispatchTuning: { fairUseCheckMs: 200 } } });
    admin = await startAndLogin(t);
    const layout = await fairUseLayout(t, admin.token);
    await must(t, admin.token, "POST", "/api/isp/nas", { name: "bng-fair-use-clock", ip: NAS_IP, secret: SECRET, coa_port: nas.port, layout_id: layout.id });
    radius = await startFreeradius({ baseUrl: t.listen(), credential: { kind: "basic", corp: "acme" }, clients: [{ name: "nas_fair_use", ipaddr: "127.0.0.1", secret: SECRET }] });
  });
  afterAll(async () => {
    await radius?.stop();
    await t?.close();
    await nas?.stop();
  });

  const access = (user: string) => radclient(radius.authPort, "auth", SECRET, { "NAS-IP-Address": NAS_IP, "User-Name": user, "User-Password": `${user}-pass-1` });
  const accounting = (user: string, attrs: Record<string, string | number>) =>
    radclient(radius.acctPort, "acct", SECRET, { "NAS-IP-Address": NAS_IP, "User-Name": user, "Framed-IP-Address": FRAMED_IP, ...attrs });
  const network = async (id: string) => (await must(t, admin.token, "GET", `/api/contract/${id}`)).network as { state: string; until: string | null; cycle: { start: string; end: string; used_bytes: number } };
  const history = async (id: string) => (await must(t, admin.token, "GET", `/api/history?target_id=${id}&limit=500`)).items as { actor: string; action: string; changes: { field: string; before: unknown; after: unknown }[] }[];
  /** One pass of the `fair-use` job, run now and waited for (its answer is 202 while it runs). */
  async function runJob() {
    const started = await waitFor("the fair-use job to start a pass", async () => {
      const res = await t.req("POST", "/api/system/jobs/fair-use/run", { token: admin.token });
      // 409: the pass the job started on its own is running
      if (res.status === 409) return null;
      expect(res.status).toBe(202);
      return res.body.last_started_at as string;
    });
    await waitFor("the fair-use pass to finish", async () => {
      const job = (await must(t, admin.token, "GET", "/api/system/jobs")).items.find((j: { name: string }) => j.name === "fair-use");
      return !job.running && job.last_finished_at >= started && job.last_outcome;
    });
  }
  const setPolicy = (policy: Record<string, unknown>) => must(t, admin.token, "PUT", "/api/isp/policy", policy);
  /** A request as the NAS logged it; a CoA-Request carries the pool and the state (the address list) too. */
  const line = (kind: string, user: string, session: string, rate: string, pool?: [string, string]) =>
    `${kind} ${user} ${session} ${NAS_IP} ${FRAMED_IP} ${rate}${pool ? ` Framed-Pool=${pool[0]} Mikrotik-Address-List=${pool[1]}` : ""}`;

  test("throttled in one cycle; the job at the next cycle's start: CoA-Request with the original rate, state normal, by system:fair-use", async () => {
    const { contract } = await contractWith(t, admin.token, {
      username: "bia",
      password: "bia-pass-1",
      max_upload: "10M",
      max_download: "100M",
      pool_name_ipv4: "pppoe-v4",
      allowance_gb: 0.001,
      throttle_max_upload: "1M",
      throttle_max_download: "2M",
    });
    let mark = wire.mark();
    await accounting("bia", { "Acct-Status-Type": "Start", "Acct-Session-Id": "fc-1" });
    await accounting("bia", { "Acct-Status-Type": "Interim-Update", "Acct-Session-Id": "fc-1", "Acct-Session-Time": 60, "Acct-Input-Octets": 600_000, "Acct-Output-Octets": 600_000 });
    await wire.next(mark, line("CoA-Request", "bia", "fc-1", "1M/2M", ["pppoe-v4", "throttled"]));
    const throttled = await network(contract.id);
    expect(throttled).toMatchObject({ state: "throttled", cycle: { used_bytes: 1_200_000 } });

    // An hour into the next cycle (the corporation's midnight, America/Sao_Paulo).
    clockOffset = Date.parse(throttled.cycle.end) + 3_600_000 - Date.now();
    mark = wire.mark();
    await runJob();
    await wire.next(mark, line("CoA-Request", "bia", "fc-1", "10M/100M", ["pppoe-v4", "normal"]));
    expect(wire.since(mark)).toEqual([line("CoA-Request", "bia", "fc-1", "10M/100M", ["pppoe-v4", "normal"])]);
    // (Contract.network's cycle is the wall clock's, which the test cannot move: only its state is asked.)
    expect((await network(contract.id)).state).toBe("normal");
    expect((await access("bia")).attributes["Mikrotik-Rate-Limit"]).toEqual(["10M/100M"]);
    const restore = (await history(contract.id)).find((h) => h.action === "restore");
    expect(restore).toMatchObject({ actor: "system:fair-use", changes: expect.arrayContaining([{ field: "network.state", before: "throttled", after: "normal" }]) });
  });

  test("a grace's end: back to the reduced rate (CoA-Request) under reduce, a Disconnect-Request under reject, by system:fair-use", async () => {
    const { contract } = await contractWith(
      t,
      admin.token,
      { username: "caio", password: "caio-pass-1", max_upload: "10M", max_download: "100M", pool_name_ipv4: "pppoe-v4" },
      "SUSPENDED",
    );
    await setPolicy({ suspended_mode: "reduce", suspended_max_upload: "256k", suspended_max_download: "512k", trust_unblock_days: 2, trust_unblock_every_days: 1 });
    expect((await access("caio")).attributes["Mikrotik-Rate-Limit"]).toEqual(["256k/512k"]);
    await accounting("caio", { "Acct-Status-Type": "Start", "Acct-Session-Id": "ft-1" });

    // reduce: the grace, then its end
    let mark = wire.mark();
    expect((await t.req("POST", `/api/contract/${contract.id}/trust-unblock`, { token: admin.token })).status).toBe(200);
    await wire.next(mark, line("CoA-Request", "caio", "ft-1", "10M/100M", ["pppoe-v4", "trusted"]));
    expect((await network(contract.id)).state).toBe("trusted");
    // The job before the grace's end changes nothing.
    clockOffset += 2 * DAY_MS - 60_000;
    await runJob();
    expect((await network(contract.id)).state).toBe("trusted");
    clockOffset += 2 * 60_000;
    mark = wire.mark();
    await runJob();
    await wire.next(mark, line("CoA-Request", "caio", "ft-1", "256k/512k", ["pppoe-v4", "suspended"]));
    expect(wire.since(mark)).toEqual([line("CoA-Request", "caio", "ft-1", "256k/512k", ["pppoe-v4", "suspended"])]);
    expect(await network(contract.id)).toMatchObject({ state: "suspended", until: null });
    const ended = (await history(contract.id)).find((h) => h.action === "trust-end");
    expect(ended).toMatchObject({ actor: "system:fair-use", changes: expect.arrayContaining([{ field: "network.state", before: "trusted", after: "suspended" }]) });

    // reject: a second grace (trust_unblock_every_days 1 has passed); the policy turns to reject
    // while it runs (nothing sent: a trusted contract stays online), then it ends.
    mark = wire.mark();
    expect((await t.req("POST", `/api/contract/${contract.id}/trust-unblock`, { token: admin.token })).status).toBe(200);
    await wire.next(mark, line("CoA-Request", "caio", "ft-1", "10M/100M", ["pppoe-v4", "trusted"]));
    await setPolicy({ suspended_mode: "reject", trust_unblock_days: 2, trust_unblock_every_days: 1 });
    expect((await network(contract.id)).state).toBe("trusted");
    clockOffset += 2 * DAY_MS + 60_000;
    await runJob();
    await wire.next(mark, line("Disconnect-Request", "caio", "ft-1", ""));
    expect(wire.since(mark)).toEqual([line("CoA-Request", "caio", "ft-1", "10M/100M", ["pppoe-v4", "trusted"]), line("Disconnect-Request", "caio", "ft-1", "")]);
    expect(await network(contract.id)).toMatchObject({ state: "suspended", until: null });
    expect((await access("caio")).code).toBe("Access-Reject");
    expect((await history(contract.id)).filter((h) => h.action === "trust-end").map((h) => h.actor)).toEqual(["system:fair-use", "system:fair-use"]);
  });
});
