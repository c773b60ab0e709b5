// `bun run test` step: the cluster test (test/cluster/) runs etcd, Patroni and HAProxy itself and
// never skips, so on a fresh Debian machine the test command installs them, as ensure-postgres.ts
// installs PostgreSQL. Fast when they are present (a few file checks). Debian starts etcd and
// HAProxy as system services on install; the tests start their own on free ports, so the install
// runs under a policy-rc.d that forbids starting services, and any of the newly installed
// packages' services that run anyway are stopped and disabled (a service installed before is left alone).
import { existsSync, rmSync, writeFileSync } from "node:fs";

/** The programs the harness (test/support/patroni.ts) runs, and the Debian package of each. */
const NEEDED: { bin: string; pkg: string }[] = [
  { bin: "/usr/bin/patroni", pkg: "patroni" },
  { bin: "/usr/bin/patronictl", pkg: "patroni" },
  // Patroni's etcd client (the first of patroni's alternative dependencies; named so it is never another).
  { bin: "/usr/lib/python3/dist-packages/etcd/__init__.py", pkg: "python3-etcd" },
  { bin: "/usr/bin/etcd", pkg: "etcd-server" },
  { bin: "/usr/bin/etcdctl", pkg: "etcd-client" },
  { bin: "/usr/sbin/haproxy", pkg: "haproxy" },
  // deploy/cluster/render.sh (the example's template renderer, tested in test/cluster/) runs envsubst.
  { bin: "/usr/bin/envsubst", pkg: "gettext-base" },
];
/** The system services those packages bring (patroni's does not start without a config; stopped anyway). */
const SERVICES: Record<string, string> = { "etcd-server": "etcd", haproxy: "haproxy", patroni: "patroni" };

const missing = [...new Set(NEEDED.filter((n) => !existsSync(n.bin)).map((n) => n.pkg))];
if (missing.length > 0) {
  const root = process.getuid?.() === 0;
  const sudo = root ? "" : Bun.which("sudo") ? "sudo -n " : null;
  if (sudo === null || !Bun.which("apt-get")) {
    console.error(`${missing.join(", ")} missing and cannot be installed here (needs apt-get, as root or with sudo): apt-get install ${missing.join(" ")}`);
    process.exit(1);
  }
  console.log(`cluster test tools missing: installing ${missing.join(" ")} from Debian's packages (test/cluster needs them)`);
  // policy-rc.d exit 101 = "action forbidden": invoke-rc.d starts nothing during the install. An
  // existing one (containers ship one) is left as it is.
  const policy = "/usr/sbin/policy-rc.d";
  const ownPolicy = root && !existsSync(policy);
  if (ownPolicy) writeFileSync(policy, "#!/bin/sh\n# written by corpadmin scripts/ensure-cluster.ts for the install only\nexit 101\n", { mode: 0o755 });
  try {
    const install = Bun.spawnSync(
      ["bash", "-c", `${sudo}apt-get update -qq && DEBIAN_FRONTEND=noninteractive ${sudo}apt-get install -y -qq --no-install-recommends ${missing.join(" ")}`],
      { stdout: "inherit", stderr: "inherit" },
    );
    if (install.exitCode !== 0) {
      console.error(`installing ${missing.join(" ")} failed`);
      process.exit(1);
    }
  } finally {
    if (ownPolicy) rmSync(policy, { force: true });
  }
  // Whatever started anyway (no policy-rc.d honoured, a non-root install through sudo): stopped
  // now and not started at the next boot. Only the services of packages installed just now: one
  // that was there before is the machine's own. Each step may fail harmlessly (no systemd in a container).
  const stopNew = missing
    .filter((pkg) => pkg in SERVICES)
    .map((pkg) => `(${sudo}systemctl disable --now ${SERVICES[pkg]} >/dev/null 2>&1 || ${sudo}service ${SERVICES[pkg]} stop >/dev/null 2>&1 || true)`)
    .join("; ");
  if (stopNew) Bun.spawnSync(["bash", "-c", stopNew], { stdout: "inherit", stderr: "inherit" });
  const still = NEEDED.filter((n) => !existsSync(n.bin)).map((n) => n.bin);
  if (still.length > 0) {
    console.error(`installed, yet ${still.join(", ")} still missing`);
    process.exit(1);
  }
}
