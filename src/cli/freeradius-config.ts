// `corpadmin freeradius-config`: writes the FreeRADIUS 3.2 configuration directory of
// modules/isp/freeradius.ts (radiusd.conf, rlm_rest asking corpadmin, the site with its NAS
// clients) from the binary, which is all an operator has. README ("ISP") says where it goes on Debian.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ipaddr from "ipaddr.js";
import { writeFreeradiusConfig, type FreeradiusClient, type FreeradiusOptions } from "../modules/isp/freeradius";

export const FREERADIUS_HELP = `Usage: corpadmin freeradius-config --out DIR --client NAME,ADDRESS,SECRET [--client ...]
                                  (--corp AUTH_NAME [--nas-secret SECRET] | --key API_KEY) [options]

Writes a FreeRADIUS 3.2 configuration directory whose rest module asks corpadmin
(GET /api/isp/radius/authorize, POST /api/isp/radius/accounting): radiusd.conf,
mods-enabled/{rest,pap,chap,always}, sites-enabled/corpadmin. Run it with
freeradius -f -d DIR (README, "ISP", says how on Debian).

  --out DIR            the directory to write (created; files 0640, directories 0750). An existing
                       radiusd.conf there that corpadmin did not write is never overwritten
  --client NAME,ADDRESS,SECRET
                       a NAS FreeRADIUS accepts packets from: a name (letters, digits, - and _),
                       its address or CIDR block, and its RADIUS shared secret (the rest of the
                       value, commas included). Repeat for each NAS; at least one
  --corp AUTH_NAME     HTTP Basic as the corporation AUTH_NAME with the NAS's secret: by default
                       each request carries the RADIUS shared secret of the client it came from,
                       so a NAS registered in corpadmin with that secret needs nothing else
  --nas-secret SECRET  with --corp: one fixed NAS secret instead
  --key API_KEY        an external app's X-Api-Key instead of --corp
  --url URL            corpadmin's base URL as FreeRADIUS reaches it (http://127.0.0.1:8080)
  --listen ADDRESS     the address FreeRADIUS listens on (*: every IPv4 address)
  --auth-port N        authentication port (1812)
  --acct-port N        accounting port (1813)
  --timeout SECONDS    rlm_rest's HTTP timeout (4)
`;

export class FreeradiusConfigError extends Error {}

/** The values of a flag given several times (`--client a --client b`, or `--client=a`). */
function repeated(argv: string[], flag: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === `--${flag}` && i + 1 < argv.length && !argv[i + 1].startsWith("--")) values.push(argv[++i]);
    else if (argv[i].startsWith(`--${flag}=`)) values.push(argv[i].slice(flag.length + 3));
  }
  return values;
}

function parseClient(value: string): FreeradiusClient {
  const [name, address, ...rest] = value.split(",");
  const secret = rest.join(",");
  if (!name || address === undefined || !secret) throw new FreeradiusConfigError(`--client ${JSON.stringify(value)}: expected NAME,ADDRESS,SECRET`);
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new FreeradiusConfigError(`--client ${name}: the name may hold letters, digits, - and _ only`);
  const ip = address.trim();
  let valid = false;
  try {
    valid = ip.includes("/") ? (ipaddr.parseCIDR(ip), true) : ipaddr.isValid(ip);
  } catch {
    valid = false;
  }
  if (!valid) throw new FreeradiusConfigError(`--client ${name}: ${JSON.stringify(address)} is not an IP address or CIDR block`);
  if (/[\r\n\0]/.test(secret)) throw new FreeradiusConfigError(`--client ${name}: the secret cannot hold line breaks`);
  return { name, ipaddr: ip, secret };
}

function port(flags: Map<string, string>, flag: string): number | undefined {
  const v = flags.get(flag);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new FreeradiusConfigError(`--${flag} must be a port number (1-65535)`);
  return n;
}

/** The options of the command line, or a FreeradiusConfigError naming the flag that is wrong. */
export function freeradiusOptionsFrom(argv: string[], flags: Map<string, string>): { out: string; options: FreeradiusOptions } {
  const value = (flag: string) => {
    const v = flags.get(flag);
    if (v === "true") throw new FreeradiusConfigError(`--${flag} needs a value`);
    return v;
  };
  const out = value("out");
  if (!out) throw new FreeradiusConfigError("--out DIR is required");
  const clients = repeated(argv, "client").map(parseClient);
  if (!clients.length) throw new FreeradiusConfigError("at least one --client NAME,ADDRESS,SECRET is required (the NAS that send requests)");
  const names = clients.map((c) => c.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new FreeradiusConfigError(`--client ${twice} is given twice`);

  const key = value("key");
  const corp = value("corp");
  const nasSecret = value("nas-secret");
  if (key && corp) throw new FreeradiusConfigError("--key and --corp exclude each other: one credential");
  if (nasSecret !== undefined && !corp) throw new FreeradiusConfigError("--nas-secret goes with --corp");
  let credential: FreeradiusOptions["credential"];
  if (key) {
    if (!/^[^.\s]+\.[^.\s]+\.[^.\s]+$/.test(key)) throw new FreeradiusConfigError("--key must be an external app's API key (<corp id>.<app id>.<secret>)");
    credential = { kind: "api-key", key };
  } else if (corp) {
    if (/[\r\n\0]/.test(corp) || (nasSecret !== undefined && (/[\r\n\0]/.test(nasSecret) || !nasSecret))) throw new FreeradiusConfigError("--corp and --nas-secret cannot be empty or hold line breaks");
    credential = { kind: "basic", corp, ...(nasSecret !== undefined ? { secret: nasSecret } : {}) };
  } else {
    throw new FreeradiusConfigError("a credential is required: --corp AUTH_NAME (the NAS secret) or --key API_KEY (an external app)");
  }

  const baseUrl = value("url") ?? "http://127.0.0.1:8080";
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new FreeradiusConfigError(`--url ${baseUrl} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new FreeradiusConfigError("--url must be an http:// or https:// URL");
  if (url.search || url.hash || /[\r\n"]/.test(baseUrl)) throw new FreeradiusConfigError("--url must be corpadmin's base URL (no query, fragment or quotes)");

  const listen = value("listen") ?? "*";
  if (listen !== "*" && !ipaddr.isValid(listen)) throw new FreeradiusConfigError(`--listen ${listen} is not an IP address (or * for every IPv4 address)`);
  const timeout = flags.has("timeout") ? Number(flags.get("timeout")) : undefined;
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1 || timeout > 60)) throw new FreeradiusConfigError("--timeout must be whole seconds, 1 to 60");
  const authPort = port(flags, "auth-port");
  const acctPort = port(flags, "acct-port");
  if ((authPort ?? 1812) === (acctPort ?? 1813)) throw new FreeradiusConfigError("--auth-port and --acct-port must differ");
  return {
    out: resolve(out),
    options: {
      baseUrl: url.toString().replace(/\/+$/, ""),
      credential,
      clients,
      listenAddress: listen,
      authPort,
      acctPort,
      timeout,
    },
  };
}

export function freeradiusConfig(argv: string[], flags: Map<string, string>, out: (line: string) => void = (l) => process.stdout.write(l + "\n")): number {
  let parsed: ReturnType<typeof freeradiusOptionsFrom>;
  try {
    parsed = freeradiusOptionsFrom(argv, flags);
  } catch (err) {
    if (!(err instanceof FreeradiusConfigError)) throw err;
    process.stderr.write(`corpadmin: ${err.message}\n(corpadmin freeradius-config --help)\n`);
    return 2;
  }
  const { out: dir, options } = parsed;
  // Never over the stock tree (/etc/freeradius/3.0) or anything else that is not ours.
  const radiusd = join(dir, "radiusd.conf");
  if (existsSync(radiusd) && !readFileSync(radiusd, "utf8").startsWith("# Generated by corpadmin")) {
    process.stderr.write(`corpadmin: ${radiusd} exists and corpadmin did not write it: choose another --out (a directory of its own, such as /etc/freeradius/corpadmin)\n`);
    return 2;
  }
  if (existsSync(dir) && !existsSync(radiusd) && readdirSync(dir).length) {
    process.stderr.write(`corpadmin: ${dir} is not empty: --out must be absent, empty, or a directory corpadmin wrote before\n`);
    return 2;
  }
  writeFreeradiusConfig(dir, options);
  out(`wrote ${dir}: radiusd.conf, mods-enabled/{rest,pap,chap,always}, sites-enabled/corpadmin`);
  out(`  corpadmin at ${options.baseUrl}, as ${options.credential.kind === "api-key" ? "an external app (X-Api-Key)" : `corporation ${options.credential.corp} (HTTP Basic, ${options.credential.secret === undefined ? "each NAS's RADIUS secret" : "one NAS secret"})`}`);
  out(`  listening on ${options.listenAddress}:${options.authPort ?? 1812} (auth) and :${options.acctPort ?? 1813} (accounting) for ${options.clients.map((c) => `${c.name} (${c.ipaddr})`).join(", ")}`);
  out(`Check it with: freeradius -XC -d ${dir}`);
  out(`Run it with:   freeradius -f -l stdout -d ${dir}`);
  return 0;
}
