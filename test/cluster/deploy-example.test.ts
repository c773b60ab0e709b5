// source-only: checks the files of deploy/cluster/ (the operator's cluster example) and the tools they need; no app is involved.
// The templates an operator renders with render.sh are the ones test/support/patroni.ts renders for
// the failover test, by the same rule: both must produce the same text, refuse a missing value,
// and the example's values must fill every placeholder.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEPLOY_DIR, renderTemplate } from "../support/patroni";

const TEMPLATES = ["patroni.yml", "etcd.env", "haproxy.cfg"];
const NODE_ENV = "NODE_NAME=db2\nNODE_HOST=10.0.0.12\n";

/** KEY=value lines of an env file (comments and blank lines skipped). */
function parseEnv(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split("\n")
      .filter((l) => /^[A-Z0-9_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
}

function withEnvFiles<T>(fn: (cluster: string, node: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), "corpadmin-deploy-"));
  try {
    writeFileSync(join(dir, "node.env"), NODE_ENV);
    return fn(join(DEPLOY_DIR, "cluster.env.example"), join(dir, "node.env"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const render = (template: string, ...envFiles: string[]) => Bun.spawnSync(["sh", join(DEPLOY_DIR, "render.sh"), join(DEPLOY_DIR, template), ...envFiles], { stdout: "pipe", stderr: "pipe" });

describe("deploy/cluster: the example's templates", () => {
  test("cluster.env.example and a node.env fill every placeholder; render.sh and the test harness render them alike", () => {
    withEnvFiles((cluster, node) => {
      const vars = { ...parseEnv(readFileSync(cluster, "utf8")), ...parseEnv(NODE_ENV) };
      for (const t of TEMPLATES) {
        const out = render(t, cluster, node);
        expect(out.stderr.toString()).toBe("");
        expect(out.exitCode).toBe(0);
        const text = out.stdout.toString();
        expect(text).not.toMatch(/\$\{[A-Z0-9_]+\}/);
        expect(text).toBe(renderTemplate(t, vars));
      }
    });
  });

  test("a placeholder no env file sets is refused by name, by render.sh and by the harness", () => {
    withEnvFiles((cluster) => {
      const out = render("etcd.env", cluster);
      expect(out.exitCode).not.toBe(0);
      expect(out.stderr.toString()).toMatch(/NODE_(HOST|NAME) is not set/);
      expect(out.stdout.toString()).toBe("");
    });
    expect(() => renderTemplate("etcd.env", {})).toThrow("NODE_NAME has no value");
  });

  test("the rendered patroni.yml asks for synchronous_mode and a leader key that outlives a Patroni loop and its retries", () => {
    withEnvFiles((cluster, node) => {
      const config = Bun.YAML.parse(render("patroni.yml", cluster, node).stdout.toString()) as any;
      expect(config.name).toBe("db2");
      expect(config.etcd3.hosts).toBe("10.0.0.11:2379,10.0.0.12:2379,10.0.0.13:2379");
      const dcs = config.bootstrap.dcs;
      expect(dcs.synchronous_mode).toBe(true);
      expect(dcs.loop_wait + 2 * dcs.retry_timeout).toBeLessThanOrEqual(dcs.ttl);
      // pg_rewind needs hint bits in the WAL (or checksums) to bring a failed leader back.
      expect(dcs.postgresql.use_pg_rewind).toBe(true);
      expect(dcs.postgresql.parameters.wal_log_hints).toBe("on");
      expect(config.postgresql.pg_hba.join("\n")).not.toContain("trust");
    });
  });

  test("HAProxy accepts the rendered haproxy.cfg", () => {
    withEnvFiles((cluster) => {
      const dir = mkdtempSync(join(tmpdir(), "corpadmin-haproxy-"));
      try {
        const cfg = join(dir, "haproxy.cfg");
        writeFileSync(cfg, render("haproxy.cfg", cluster).stdout.toString());
        const check = Bun.spawnSync(["/usr/sbin/haproxy", "-c", "-f", cfg], { stdout: "pipe", stderr: "pipe" });
        expect(`${check.stdout}${check.stderr}`).toContain("Configuration file is valid");
        expect(check.exitCode).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
