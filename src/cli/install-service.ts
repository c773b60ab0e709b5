// `corpadmin install-service`: installs the hardened systemd unit. Creates the system user,
// /etc/corpadmin/corpadmin.env (when absent), /var/lib/corpadmin and the unit file, then prints
// the systemctl commands that start it. `--dry-run` prints the same steps and changes nothing;
// `--root DIR` installs the files under DIR (an image or package being built) and leaves the user
// to be created on the target.
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { renderEnvFile, renderUnit, STATE_DIR, UNIT_DEFAULTS } from "../modules/ops/systemd";

export interface InstallOptions {
  binary: string | null;
  user: string;
  unitDir: string;
  root: string | null;
  dryRun: boolean;
}

export function installOptionsFrom(flags: Map<string, string>): InstallOptions {
  const flag = (k: string) => (flags.has(k) && flags.get(k) !== "true" ? flags.get(k)! : null);
  return {
    binary: flag("binary"),
    user: flag("user") ?? UNIT_DEFAULTS.user,
    unitDir: flag("unit-dir") ?? "/etc/systemd/system",
    root: flag("root"),
    dryRun: flags.has("dry-run") && flags.get("dry-run") !== "false",
  };
}

/** The running executable when this is the compiled binary (source runs need --binary). */
function runningBinary(): string | null {
  const compiled = Bun.main.startsWith("/$bunfs/") || Bun.main.includes("~BUN");
  return compiled ? process.execPath : null;
}

const sh = (cmd: string[]) => Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });

function userExists(user: string): boolean {
  return sh(["id", "-u", user]).exitCode === 0;
}

export function installService(o: InstallOptions, out: (line: string) => void = (l) => process.stdout.write(l + "\n")): number {
  const binary = o.binary ?? runningBinary();
  if (!binary) {
    out("corpadmin: --binary PATH is required when not running the compiled binary");
    return 2;
  }
  if (!isAbsolute(binary)) {
    out(`corpadmin: --binary must be an absolute path (got ${binary})`);
    return 2;
  }
  // The unit's sandbox hides these from the service (ProtectHome=yes: /home, /root, /run/user;
  // PrivateTmp=yes: /tmp and /var/tmp are empty ones of its own): it could not start its own executable.
  const hidden = binary.match(/^\/(home|root|run\/user|tmp|var\/tmp)(\/|$)/);
  if (hidden) {
    const what = hidden[1].endsWith("tmp") ? "PrivateTmp gives the service an empty /tmp and /var/tmp of its own" : "ProtectHome hides /home, /root and /run/user from the service";
    out(`corpadmin: the service could not start ${binary}: ${what}.`);
    out(`  Copy the binary to /usr/local/bin first, then install the service from there:`);
    out(`    install -m 0755 ${binary} /usr/local/bin/corpadmin && /usr/local/bin/corpadmin install-service`);
    return 2;
  }
  if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(o.user)) {
    out(`corpadmin: --user ${o.user} is not a valid system user name`);
    return 2;
  }
  if (!o.dryRun && !o.root && process.getuid?.() !== 0) {
    out("corpadmin: install-service needs root (or --dry-run to see what it would do)");
    return 1;
  }
  const at = (p: string) => (o.root ? join(o.root, p) : p);
  const envFile = UNIT_DEFAULTS.envFile;
  const unitPath = join(o.unitDir, "corpadmin.service");
  const unit = renderUnit({ binary, user: o.user, envFile });
  const say = (what: string) => out(`${o.dryRun ? "would " : ""}${what}`);

  if (!existsSync(binary) && !o.root) out(`warning: ${binary} does not exist yet; install the binary there before starting`);

  const useradd = ["useradd", "--system", "--user-group", "--home-dir", STATE_DIR, "--no-create-home", "--shell", "/usr/sbin/nologin", o.user];
  let uid: number | null = null;
  let gid: number | null = null;
  if (o.root) {
    out(`on the target machine, create the user: ${useradd.join(" ")}`);
  } else if (userExists(o.user)) {
    out(`user ${o.user} exists`);
  } else {
    say(`create system user ${o.user}: ${useradd.join(" ")}`);
    if (!o.dryRun) {
      const r = sh(useradd);
      if (r.exitCode !== 0) {
        out(`corpadmin: useradd failed: ${r.stderr.toString().trim()}`);
        return 1;
      }
    }
  }
  if (!o.root && !o.dryRun) {
    uid = Number(sh(["id", "-u", o.user]).stdout.toString().trim());
    gid = Number(sh(["id", "-g", o.user]).stdout.toString().trim());
  }

  const envDir = dirname(envFile);
  say(`create ${at(envDir)} (0750, root:${o.user})`);
  if (existsSync(at(envFile))) out(`keep ${at(envFile)} (exists)`);
  else say(`write ${at(envFile)} (0640): every setting, commented out`);
  say(`create ${at(STATE_DIR)} (0750, ${o.user}:${o.user}): the data directory`);
  const previous = existsSync(at(unitPath)) ? readFileSync(at(unitPath), "utf8") : null;
  if (previous === unit) out(`keep ${at(unitPath)} (unchanged)`);
  else say(`${previous === null ? "write" : "replace"} ${at(unitPath)} (0644):`);
  if (o.dryRun) out(unit.replace(/^/gm, "    ").trimEnd());

  if (!o.dryRun) {
    mkdirSync(at(envDir), { recursive: true, mode: 0o750 });
    chmodSync(at(envDir), 0o750);
    if (gid !== null) chownSync(at(envDir), 0, gid);
    if (!existsSync(at(envFile))) {
      writeFileSync(at(envFile), renderEnvFile(), { mode: 0o640 });
      if (gid !== null) chownSync(at(envFile), 0, gid);
    }
    mkdirSync(at(STATE_DIR), { recursive: true, mode: 0o750 });
    chmodSync(at(STATE_DIR), 0o750);
    if (uid !== null && gid !== null) chownSync(at(STATE_DIR), uid, gid);
    mkdirSync(at(o.unitDir), { recursive: true });
    if (previous !== unit) writeFileSync(at(unitPath), unit, { mode: 0o644 });
  }

  out("");
  out(o.dryRun ? "Nothing was changed (--dry-run). Then start it with:" : "Installed. Start it with:");
  out("  systemctl daemon-reload");
  out("  systemctl enable --now corpadmin");
  out("Check it with:");
  out("  systemctl status corpadmin");
  out("  journalctl -u corpadmin -f");
  return 0;
}
