// FreeRADIUS 3.2 as an RFC 5176 listener (what a NAS is to corpadmin): it checks the Request
// Authenticator and Message-Authenticator of every Disconnect-Request and CoA-Request with its
// client secret, logs the attributes it understood, and answers ACK, or NAK with Error-Cause
// Session-Context-Not-Found for User-Name "nak-me" and for the made-up session of a NAS test. Also a local UDP responder built on
// corpadmin's own codec, for the outcomes FreeRADIUS cannot be made to give (silence).
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeRequest, encodeResponse, type Attribute, type Packet } from "../../src/modules/isp/rfc5176";
import { freeUdpPort, runFreeradius, type FreeradiusProcess } from "./freeradius-harness";

export const RADCLIENT_MISSING: string | null = Bun.which("radclient") ? null : "radclient is not installed: apt-get install -y freeradius-utils";
export const FREERADIUS_MISSING: string | null = Bun.which("freeradius") ? null : "FreeRADIUS is not installed: apt-get install -y freeradius";

export interface CoaListener extends FreeradiusProcess {
  port: number;
  /**
   * One line per request: `<Packet-Type> <User-Name> <Acct-Session-Id> <NAS-IP-Address> <Framed-IP-Address> <Mikrotik-Rate-Limit>`,
   * then ` Framed-Pool=<pool> Mikrotik-Address-List=<list>` when the request carries a pool.
   */
  requests(): string[];
}

export async function startFreeradiusCoa(secret: string): Promise<CoaListener> {
  const dir = mkdtempSync(join(tmpdir(), "corpadmin-coa-"));
  chmodSync(dir, 0o755);
  const port = await freeUdpPort();
  const conf = `raddbdir = ${dir}
prefix = /usr
exec_prefix = /usr
sysconfdir = /etc
localstatedir = /var
sbindir = \${exec_prefix}/sbin
logdir = \${raddbdir}
radacctdir = \${logdir}
name = freeradius
confdir = \${raddbdir}
modconfdir = \${confdir}/mods-config
run_dir = \${raddbdir}
db_dir = \${raddbdir}
libdir = /usr/lib/freeradius
pidfile = \${run_dir}/radiusd.pid
dictdir = /usr/share/freeradius
correct_escapes = true
max_request_time = 30
cleanup_delay = 1
max_requests = 1024
hostname_lookups = no
log {
	destination = stdout
	colourise = no
}
security {
	allow_core_dumps = no
	max_attributes = 200
	reject_delay = 0
	status_server = no
}
thread pool {
	start_servers = 1
	max_servers = 4
	min_spare_servers = 1
	max_spare_servers = 2
	max_requests_per_server = 0
}
modules {
	always ok {
		rcode = ok
	}
	always reject {
		rcode = reject
	}
	linelog coa_log {
		filename = \${raddbdir}/coa.log
		format = "%{Packet-Type} %{User-Name} %{Acct-Session-Id} %{NAS-IP-Address} %{Framed-IP-Address} %{Mikrotik-Rate-Limit}"
	}
	# The same line, the pool and the address list (a redirect's CoA), only for requests that carry a pool.
	linelog coa_log_pool {
		filename = \${raddbdir}/coa.log
		format = "%{Packet-Type} %{User-Name} %{Acct-Session-Id} %{NAS-IP-Address} %{Framed-IP-Address} %{Mikrotik-Rate-Limit} Framed-Pool=%{Framed-Pool} Mikrotik-Address-List=%{Mikrotik-Address-List}"
	}
}
server coa {
	listen {
		type = coa
		ipaddr = 127.0.0.1
		port = ${port}
	}
	client corpadmin {
		ipaddr = 127.0.0.1
		secret = "${secret}"
		require_message_authenticator = yes
	}
	recv-coa {
		if (&Framed-Pool) {
			coa_log_pool
		}
		else {
			coa_log
		}
		# "nak-me", and the session POST /api/isp/nas/{id}/test asks for: one this NAS does not have.
		if (&User-Name == "nak-me" || &Acct-Session-Id =~ /^corpadmin-test-/) {
			update reply {
				&Error-Cause := Session-Context-Not-Found
			}
			reject
		}
		ok
	}
	send-coa {
		ok
	}
}
`;
  writeFileSync(join(dir, "radiusd.conf"), conf, { mode: 0o644 });
  const server = await runFreeradius(dir);
  const logFile = join(dir, "coa.log");
  return {
    port,
    requests: () => (existsSync(logFile) ? readFileSync(logFile, "utf8").split("\n").filter(Boolean) : []),
    ...server,
  };
}

export type Answer = { code: "Disconnect-ACK" | "Disconnect-NAK" | "CoA-ACK" | "CoA-NAK"; attributes?: Attribute[] } | "silence";

/** A NAS stand-in on loopback: decodes each request with corpadmin's codec and answers as told. */
export async function startResponder(secret: string, answer: (p: Packet) => Answer) {
  const received: Packet[] = [];
  const sock = await Bun.udpSocket({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(s, buf, port, address) {
        let p: Packet;
        try {
          p = decodeRequest(Buffer.from(buf), secret);
        } catch {
          return;
        }
        received.push(p);
        const a = answer(p);
        if (a !== "silence") s.send(encodeResponse(a.code, p.identifier, a.attributes ?? [], secret, p.authenticator), port, address);
      },
    },
  });
  return { port: sock.port, received, stop: () => sock.close() };
}
