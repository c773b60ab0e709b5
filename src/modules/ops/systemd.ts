// The systemd unit: a dedicated user, the data directory in systemd's StateDirectory
// (/var/lib/corpadmin), and a sandbox in which the service can write nowhere else.
import { SETTINGS } from "../../config";

export interface UnitOptions {
  /** Absolute path of the corpadmin executable. */
  binary: string;
  user: string;
  envFile: string;
}

export const UNIT_DEFAULTS: UnitOptions = {
  binary: "/usr/local/bin/corpadmin",
  user: "corpadmin",
  envFile: "/etc/corpadmin/corpadmin.env",
};

export const STATE_DIR = "/var/lib/corpadmin";

export function renderUnit(o: UnitOptions = UNIT_DEFAULTS): string {
  return `# corpadmin as a systemd service. Written by \`corpadmin install-service\`; settings go in
# ${o.envFile} (CORPADMIN_* variables, see \`corpadmin help\`), not here.
[Unit]
Description=corpadmin administration and registry service
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=${o.user}
Group=${o.user}
ExecStart=${o.binary} serve
# SIGTERM drains: in-flight requests finish, then the databases close.
KillSignal=SIGTERM
TimeoutStopSec=30
Restart=on-failure
RestartSec=5
Environment=CORPADMIN_DATA_DIR=${STATE_DIR}
EnvironmentFile=-${o.envFile}
# ${STATE_DIR}, owned by ${o.user}: the platform database, corps/, secret.key, backups/.
StateDirectory=corpadmin
StateDirectoryMode=0750
WorkingDirectory=${STATE_DIR}
UMask=0077
LimitNOFILE=65536

# Sandbox (\`systemd-analyze security\`: 1.9): read-only system, no home directories, private /tmp,
# /dev and mounts, no capabilities, no privilege gain, only the system calls of a system service.
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
PrivateMounts=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
# /proc shows the service's own processes only, and no system-wide files (it reads none).
ProtectProc=invisible
ProcSubset=pid
RestrictSUIDSGID=yes
RestrictRealtime=yes
RestrictNamespaces=yes
LockPersonality=yes
RemoveIPC=yes
# No MemoryDenyWriteExecute: the JavaScript JIT writes the code it runs.
SystemCallArchitectures=native
SystemCallFilter=@system-service
SystemCallFilter=~@privileged @resources
# A refused call fails with EPERM instead of killing the service.
SystemCallErrorNumber=EPERM
# TCP/UDP and local sockets only: no netlink (nothing reads the interfaces), no raw packets.
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
# No capability. CORPADMIN_PORT below 1024 (443) needs CAP_NET_BIND_SERVICE: README, "Install on a server".
CapabilityBoundingSet=
# Corporation databases on another Server, or backups on another disk, need write access:
#ReadWritePaths=/srv/corpadmin-servers /mnt/backups

[Install]
WantedBy=multi-user.target
`;
}

/** The environment file written when none exists: every setting, commented out. */
export function renderEnvFile(): string {
  const lines = [
    "# corpadmin settings (systemd EnvironmentFile). Uncomment and edit; then",
    "#   systemctl restart corpadmin",
    "# CORPADMIN_DATA_DIR is set by the unit (/var/lib/corpadmin).",
    "",
  ];
  for (const s of SETTINGS) {
    if (s.env === "CORPADMIN_DATA_DIR") continue;
    lines.push(`# ${s.help}`, `#${s.env}=${s.default}`);
  }
  return lines.join("\n") + "\n";
}
