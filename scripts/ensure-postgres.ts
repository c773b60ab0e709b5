// `bun run test` step: the cluster-mode tests (test/db/pg/, test/core/pg/) need PostgreSQL 15 and never skip, so
// on a fresh Debian machine the test command installs it, as `bun run bench` installs wrk. With
// PG_BIN set, that directory is used as it is and nothing is installed.
import { existsSync } from "node:fs";
import { join } from "node:path";

const DEFAULT_BIN = "/usr/lib/postgresql/15/bin";
const bin = process.env.PG_BIN ?? DEFAULT_BIN;
const ready = () => existsSync(join(bin, "initdb")) && existsSync(join(bin, "postgres"));

if (!ready()) {
  if (process.env.PG_BIN) {
    console.error(`PG_BIN=${bin} has no initdb/postgres: the cluster-mode tests need PostgreSQL 15 there`);
    process.exit(1);
  }
  const root = process.getuid?.() === 0;
  const sudo = root ? "" : Bun.which("sudo") ? "sudo -n " : null;
  if (sudo === null || !Bun.which("apt-get")) {
    console.error("PostgreSQL 15 is missing and cannot be installed here (needs apt-get, as root or with sudo): apt-get install postgresql-15");
    process.exit(1);
  }
  console.log("PostgreSQL 15 is missing: installing postgresql-15 from Debian's packages (the cluster-mode tests need it)");
  const install = Bun.spawnSync(
    ["bash", "-c", `${sudo}apt-get update -qq && DEBIAN_FRONTEND=noninteractive ${sudo}apt-get install -y -qq postgresql-15 && (${sudo}pg_ctlcluster 15 main stop 2>/dev/null || true)`],
    { stdout: "inherit", stderr: "inherit" },
  );
  if (install.exitCode !== 0 || !ready()) {
    console.error(`installing postgresql-15 failed (no ${bin}/initdb afterwards)`);
    process.exit(1);
  }
}
