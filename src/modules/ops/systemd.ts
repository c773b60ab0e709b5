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
UMask=0027
LimitNOFILE=65536

# Sandbox: read-only system, no home directories, private /tmp and /dev, no privilege gain.
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
ProtectProc=invisible
RestrictSUIDSGID=yes
RestrictRealtime=yes
RestrictNamespaces=yes
LockPersonality=yes
RemoveIPC=yes
SystemCallArchitectures=native
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK
# The only capability: listening on a port below 1024 (CORPADMIN_PORT=443).
CapabilityBoundingSet=CAP_NET_BIND_SERVICE
AmbientCapabilities=CAP_NET_BIND_SERVICE
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
