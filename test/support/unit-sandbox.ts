// Runs a command under the system call filter of the systemd unit (src/modules/ops/systemd.ts),
// for machines where systemd is not PID 1 (CI containers): the unit's SystemCallFilter= lines,
// expanded by `systemd-analyze syscall-filter` as systemd expands them (the allowed groups minus
// the denied ones, any other call failing with SystemCallErrorNumber=EPERM), and its
// RestrictAddressFamilies= (sockets of other families fail with EAFNOSUPPORT), installed with
// libseccomp on every thread of this process, then inherited by the command it spawns.
//   bun test/support/unit-sandbox.ts <command> [args...]
// stdout/stderr are the command's; stderr first gets one line "unit-sandbox: ..." saying what was
// installed and that a netlink socket is refused. Exit code: the command's.
import { dlopen, FFIType, ptr } from "bun:ffi";
import { renderUnit, UNIT_DEFAULTS } from "../../src/modules/ops/systemd";

const EPERM = 1;
const EAFNOSUPPORT = 97;
const FAMILIES: Record<string, number> = { AF_UNIX: 1, AF_INET: 2, AF_INET6: 10, AF_NETLINK: 16, AF_PACKET: 17 };

/** `@group` → its system calls, nested groups expanded (systemd's own tables). */
function expand(item: string, seen = new Set<string>()): string[] {
  if (!item.startsWith("@")) return [item];
  if (seen.has(item)) return [];
  seen.add(item);
  const out = Bun.spawnSync(["systemd-analyze", "syscall-filter", item], { stdout: "pipe", stderr: "pipe" });
  if (out.exitCode !== 0) throw new Error(`systemd-analyze syscall-filter ${item}: ${out.stderr.toString()}`);
  const lines = out.stdout
    .toString()
    .split("\n")
    .slice(1)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  return lines.flatMap((l) => expand(l, seen));
}

/** The unit's filter: the system calls it allows, and the socket families. */
export function unitFilter(unit = renderUnit(UNIT_DEFAULTS)): { allowed: string[]; families: string[]; errno: string } {
  const lines = unit.split("\n");
  const values = (key: string) => lines.filter((l) => l.startsWith(`${key}=`)).map((l) => l.slice(key.length + 1).trim());
  const allow = new Set<string>();
  const deny = new Set<string>();
  for (const v of values("SystemCallFilter")) {
    const negated = v.startsWith("~");
    for (const item of v.replace(/^~/, "").split(/\s+/).filter(Boolean)) for (const call of expand(item)) (negated ? deny : allow).add(call);
  }
  return { allowed: [...allow].filter((c) => !deny.has(c)).sort(), families: values("RestrictAddressFamilies").flatMap((v) => v.split(/\s+/)), errno: values("SystemCallErrorNumber")[0] ?? "" };
}

function install(): string {
  const { allowed, families, errno } = unitFilter();
  if (errno !== "EPERM") throw new Error(`the unit's SystemCallErrorNumber is ${errno}; this harness knows EPERM`);
  const lib = dlopen("libseccomp.so.2", {
    seccomp_init: { args: [FFIType.u32], returns: FFIType.ptr },
    seccomp_attr_set: { args: [FFIType.ptr, FFIType.i32, FFIType.u32], returns: FFIType.i32 },
    seccomp_syscall_resolve_name: { args: [FFIType.cstring], returns: FFIType.i32 },
    seccomp_rule_add_array: { args: [FFIType.ptr, FFIType.u32, FFIType.i32, FFIType.u32, FFIType.ptr], returns: FFIType.i32 },
    seccomp_load: { args: [FFIType.ptr], returns: FFIType.i32 },
  });
  const s = lib.symbols;
  const ALLOW = 0x7fff0000;
  const ERRNO = (n: number) => 0x00050000 | n;
  const ctx = s.seccomp_init(ERRNO(EPERM));
  if (!ctx) throw new Error("seccomp_init failed");
  // SCMP_FLTATR_CTL_TSYNC: every thread of this process (Bun runs several), not only this one.
  if (s.seccomp_attr_set(ctx, 4, 1) !== 0) throw new Error("seccomp_attr_set(TSYNC) failed");
  const nr = (name: string) => s.seccomp_syscall_resolve_name(Buffer.from(`${name}\0`));
  let rules = 0;
  for (const call of allowed) {
    if (call === "socket") continue;
    const n = nr(call);
    // Names of other architectures (arm_fadvise64_64, ...): not this one's.
    if (n < 0) continue;
    const rc = s.seccomp_rule_add_array(ctx, ALLOW, n, 0, null);
    if (rc !== 0) throw new Error(`seccomp_rule_add ${call}: ${rc}`);
    rules++;
  }
  // socket(): the unit's families allowed, netlink and packet sockets EAFNOSUPPORT (as systemd),
  // any other EPERM. struct scmp_arg_cmp { u32 arg; u32 op; u64 datum_a; u64 datum_b; }, op EQ = 4.
  const socketNr = nr("socket");
  const cmp = (family: number) => {
    const b = new ArrayBuffer(24);
    const v = new DataView(b);
    v.setUint32(0, 0, true);
    v.setUint32(4, 4, true);
    v.setBigUint64(8, BigInt(family), true);
    return new Uint8Array(b);
  };
  for (const [name, family] of Object.entries(FAMILIES)) {
    const action = families.includes(name) ? ALLOW : ERRNO(EAFNOSUPPORT);
    if (s.seccomp_rule_add_array(ctx, action, socketNr, 1, ptr(cmp(family))) !== 0) throw new Error(`seccomp_rule_add socket(${name}) failed`);
  }
  const loaded = s.seccomp_load(ctx);
  if (loaded !== 0) throw new Error(`seccomp_load failed: ${loaded}`);
  const libc = dlopen("libc.so.6", { socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 } });
  const netlink = libc.symbols.socket(FAMILIES.AF_NETLINK, 3, 0);
  if (netlink >= 0) throw new Error("a netlink socket opened under the filter");
  return `unit-sandbox: ${rules} system calls allowed (families ${families.join(" ")}); a netlink socket is refused`;
}

if (import.meta.main) {
  const command = process.argv.slice(2);
  if (!command.length) {
    process.stderr.write("usage: bun test/support/unit-sandbox.ts <command> [args...]\n");
    process.exit(2);
  }
  process.stderr.write(install() + "\n");
  const child = Bun.spawn(command, { stdin: "inherit", stdout: "inherit", stderr: "inherit" });
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => child.kill(signal));
  process.exit(await child.exited);
}
