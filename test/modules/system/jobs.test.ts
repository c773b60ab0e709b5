// GET /api/system/jobs and POST /api/system/jobs/{name}/run (routes.md, Network operations
// additions: Job): every background job listed with its schedule, run on demand, its last pass
// kept in the platform database (so a restarted service still shows it); 409 while a pass runs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN, addUser, makeApp, makePeerApp, startAndLogin, tempDir, type TestApp } from "../../support/helpers";
import { TEST_BACKEND } from "../../support/backend";
import { waitFor } from "../../support/wait";

const JOBS = ["audit-retention", "contract-bodies", "fair-use", "housekeeping", "metric-scheduler", "nas-health", "person-views", "scheduled-backup", "socket-hub", "webhook-dispatcher"];
const ENV = { CORPADMIN_BACKUP_CRON: "0 3 * * *" };

interface JobView {
  name: string;
  schedule: string;
  node: string | null;
  running: boolean;
  last_started_at: string | null;
  last_finished_at: string | null;
  last_outcome: "ok" | "failed" | null;
  last_error: string | null;
  next_at: string | null;
}

let t: TestApp;
let admin: { token: string; corpId: string };
const dir = tempDir();
const list = async (): Promise<JobView[]> => (await t.req("GET", "/api/system/jobs", { token: admin.token })).body.items;
const job = async (name: string) => (await list()).find((j) => j.name === name)!;
const run = (name: string, token = admin.token) => t.req("POST", `/api/system/jobs/${name}/run`, { token });
/**
 * Cluster mode (PostgreSQL): a single-node job runs where its lease is held, taken a lease grace
 * after the start (5 s in tests); until then another node may hold it, and run-now is 409 naming it.
 */
const runHeld = (name: string) =>
  waitFor(`${name} held by this node`, async () => {
    const res = await run(name);
    return res.status === 409 && /lease/.test(res.body.detail) ? null : res;
  });
/** Waits until the job's pass started at or after `since` has finished. */
const finished = (name: string, since: string) => waitFor(`${name} to finish`, async () => {
  const j = await job(name);
  return !j.running && j.last_finished_at !== null && j.last_started_at !== null && j.last_started_at >= since && j;
});

beforeAll(async () => {
  t = await makeApp({ dir, env: ENV });
  admin = await startAndLogin(t);
});
afterAll(() => t.close());

describe("GET /api/system/jobs", () => {
  test("every background job, with its schedule; the scheduled ones have a next pass", async () => {
    const res = await t.req("GET", "/api/system/jobs", { token: admin.token });
    expect(res.status).toBe(200);
    const jobs = res.body.items as JobView[];
    expect(jobs.map((j) => j.name).sort()).toEqual(JOBS);
    for (const j of jobs) {
      expect(Object.keys(j).sort()).toEqual(["last_error", "last_finished_at", "last_outcome", "last_started_at", "name", "next_at", "node", "running", "schedule"]);
      expect(j.schedule.length).toBeGreaterThan(5);
      // One node: no node names; cluster mode: the node running it (a single-node job: once its lease is held).
      if (TEST_BACKEND === "sqlite") expect(j.node).toBeNull();
    }
    const backup = jobs.find((j) => j.name === "scheduled-backup")!;
    expect(backup.schedule).toContain("0 3 * * *");
    expect(backup.next_at).toMatch(/T03:00:00\.000\+00:00$/);
    // Jobs that make a pass at start-up show it once it ended.
    for (const name of ["housekeeping", "nas-health", "audit-retention", "fair-use"]) {
      const j = await waitFor(`${name}'s start-up pass`, async () => (await job(name)).last_outcome && job(name));
      expect(j).toMatchObject({ last_outcome: "ok", last_error: null, running: false });
    }
    expect((await job("nas-health")).next_at).not.toBeNull();
  });

  test("401 without a token, 403 for anyone but a super-admin", async () => {
    expect((await t.req("GET", "/api/system/jobs")).status).toBe(401);
    const boss = await addUser(t, admin.corpId, { login: "corp-boss", services: ["platform.corp", "platform.isp", "platform.core"] });
    expect((await t.req("GET", "/api/system/jobs", { token: boss.token })).status).toBe(403);
    expect((await run("housekeeping", boss.token)).status).toBe(403);
    expect((await t.req("POST", "/api/system/jobs/housekeeping/run")).status).toBe(401);
  });
});

describe("POST /api/system/jobs/{name}/run", () => {
  test("each job runs now: 202 at once, then its pass is listed with its outcome", async () => {
    for (const name of JOBS) {
      const since = new Date().toISOString().replace("Z", "+00:00");
      const res = await runHeld(name);
      expect(res.status).toBe(202);
      expect(res.body.name).toBe(name);
      if (TEST_BACKEND === "pg") expect(res.body.node).toBeString();
      const done = await finished(name, since.slice(0, 23) + "+00:00");
      expect(done).toMatchObject({ last_outcome: "ok", last_error: null });
      expect(Date.parse(done.last_finished_at!)).toBeGreaterThanOrEqual(Date.parse(done.last_started_at!));
    }
    // The backup it asked for exists.
    expect((await t.req("GET", "/api/backup", { token: admin.token })).body.items.some((b: { scheduled: boolean }) => b.scheduled)).toBe(true);
  });

  test("409 while a pass of that job runs; 404 for an unknown job", async () => {
    let pair: number[] = [];
    // Two requests at once: the second finds the first's pass running (a backup takes a while).
    for (let i = 0; i < 5 && pair.join() !== "202,409"; i++) {
      pair = (await Promise.all([run("scheduled-backup"), run("scheduled-backup")])).map((r) => r.status).sort();
      await waitFor("the backup to end", async () => !(await job("scheduled-backup")).running);
    }
    expect(pair).toEqual([202, 409]);
    const res = await t.req("GET", "/api/system/jobs", { token: admin.token });
    expect(res.body.items.find((j: JobView) => j.name === "scheduled-backup").last_outcome).toBe("ok");
    const unknown = await run("no-such-job");
    expect(unknown.status).toBe(404);
    expect(unknown.body.type).toBe("urn:corpadmin:problem:not-found");
  });

  test("a failing pass is kept with its error; the last pass outlives a restart", async () => {
    const before = await job("scheduled-backup");
    expect(before.last_outcome).toBe("ok");
    await t.close(false);
    // The backup directory is a file now: the next backup fails.
    writeFileSync(join(dir, "backups-file"), "not a directory");
    t = await makeApp({ dir, env: { ...ENV, CORPADMIN_BACKUP_DIR: join(dir, "backups-file") } });
    const login = await t.req("POST", "/api/login", { body: { corp: "acme", login: ADMIN.login, password: ADMIN.password } });
    admin = { token: login.body.access_token, corpId: admin.corpId };
    // The restarted service shows the pass the previous one ran.
    expect(await job("scheduled-backup")).toMatchObject({ last_outcome: "ok", last_started_at: before.last_started_at });
    const since = new Date().toISOString().slice(0, 23) + "+00:00";
    expect((await runHeld("scheduled-backup")).status).toBe(202);
    const failed = await finished("scheduled-backup", since);
    expect(failed.last_outcome).toBe("failed");
    expect(failed.last_error).toBeTruthy();
  });
});

// Cluster mode: two nodes over one database; a single-node job runs where its lease is held.
describe.skipIf(TEST_BACKEND !== "pg")("POST /api/system/jobs/{name}/run in cluster mode", () => {
  test("the node not holding the lease answers 409 naming the holder; the holder runs it", async () => {
    const peer = await makePeerApp(t, { env: ENV });
    try {
      const peerLogin = await peer.req("POST", "/api/login", { body: { corp: "acme", login: ADMIN.login, password: ADMIN.password } });
      const nodes = [
        { app: t, token: admin.token },
        { app: peer, token: peerLogin.body.access_token as string },
      ];
      // Whichever node holds housekeeping's lease (held by t since the first tests) lists itself.
      const holder = await waitFor("housekeeping's holder", async () => {
        const listed = (await t.req("GET", "/api/system/jobs", { token: admin.token })).body.items.find((j: JobView) => j.name === "housekeeping");
        return listed.node as string | null;
      });
      const answers = await Promise.all(nodes.map((n) => n.app.req("POST", "/api/system/jobs/housekeeping/run", { token: n.token })));
      const refused = answers.filter((a) => a.status === 409);
      expect(answers.map((a) => a.status).sort()).toEqual([202, 409]);
      expect(refused[0].body.detail).toContain(`runs on the node holding its lease, ${holder}`);
      // Jobs every node runs (the webhook sweeps) run on either.
      expect((await peer.req("POST", "/api/system/jobs/webhook-dispatcher/run", { token: nodes[1].token })).status).toBe(202);
    } finally {
      await peer.close();
    }
  });
});
