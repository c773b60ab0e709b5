// Outbound requests (webhook deliveries, the metric collector, OIDC key sets): no redirects, a
// timeout, and only to addresses the egress policy allows, checked on the address actually
// connected to.
// Default: loopback, link-local (cloud metadata included), unspecified, multicast and reserved
// addresses are refused, everything else (the ISP's private networks included) is allowed. An
// IPv6 address that embeds an IPv4 one (mapped, compatible, NAT64, 6to4, Teredo) is judged by
// the embedded address too. CORPADMIN_EGRESS_DENY always wins; CORPADMIN_EGRESS_ALLOW re-opens
// what the defaults refuse (tests allow loopback).
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { normalizeAddress, parseCidr, type ParsedCidr } from "./client-ip";

const DEFAULT_REFUSED = [
  "127.0.0.0/8",
  "::1/128",
  "169.254.0.0/16",
  "fe80::/10",
  "0.0.0.0/8",
  "::/128",
  "fd00:ec2::254/128",
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, broadcast included
  "ff00::/8", // multicast
  "100::/64", // discard-only
];

export class EgressRefused extends Error {}

/** The host's addresses; tests give their own to play a DNS answer that changes. */
export type HostResolver = (hostname: string) => Promise<string[]>;

const dnsResolver: HostResolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true }).catch(() => [])).map((a) => a.address);

type Address = ipaddr.IPv4 | ipaddr.IPv6;

function cidrs(list: string[], setting: string): ParsedCidr[] {
  return list.map((c) => {
    const p = parseCidr(c);
    if (!p) throw new Error(`invalid CIDR in ${setting}: ${c}`);
    return p;
  });
}

const within = (addr: Address, list: ParsedCidr[]) => list.some(([net, bits]) => net.kind() === addr.kind() && addr.match([net, bits] as any));

/**
 * The IPv4 addresses an IPv6 address stands for or reaches through a translator or tunnel.
 * For the local-use NAT64 prefix the embedding depends on its length (RFC 6052), so every
 * position it can take is judged.
 */
export function embeddedIPv4(addr: ipaddr.IPv6): ipaddr.IPv4[] {
  const b = addr.toByteArray();
  const v4 = (i: number[]) => new ipaddr.IPv4(i.map((k) => b[k]));
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const last = [12, 13, 14, 15];
  const out: ipaddr.IPv4[] = [];
  const p = (i: number) => (b[i] << 8) | b[i + 1];
  // ::a.b.c.d (compatible; :: and ::1 are themselves, not IPv4), ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated)
  if (zero(0, 12) && !(zero(12, 15) && b[15] <= 1)) out.push(v4(last));
  if (zero(0, 10) && p(10) === 0xffff) out.push(v4(last));
  if (zero(0, 8) && p(8) === 0xffff && zero(10, 12)) out.push(v4(last));
  if (p(0) === 0x64 && p(2) === 0xff9b) {
    if (zero(4, 12)) out.push(v4(last)); // 64:ff9b::/96
    if (p(4) === 1) out.push(v4([6, 7, 9, 10]), v4([7, 9, 10, 11]), v4([9, 10, 11, 12]), v4(last)); // 64:ff9b:1::/48
  }
  if (p(0) === 0x2002) out.push(v4([2, 3, 4, 5])); // 6to4
  if (p(0) === 0x2001 && p(2) === 0) {
    // Teredo: the server, and the client's address stored inverted
    out.push(v4([4, 5, 6, 7]), new ipaddr.IPv4(last.map((k) => b[k] ^ 0xff)));
  }
  return out;
}

export class EgressPolicy {
  private allow: ParsedCidr[];
  private deny: ParsedCidr[];
  private refused = cidrs(DEFAULT_REFUSED, "defaults");

  constructor(
    allow: string[],
    deny: string[],
    private resolveHost: HostResolver = dnsResolver,
  ) {
    this.allow = cidrs(allow, "CORPADMIN_EGRESS_ALLOW");
    this.deny = cidrs(deny, "CORPADMIN_EGRESS_DENY");
  }

  allows(address: string): boolean {
    const addr = normalizeAddress(address);
    if (!addr) return false;
    const judged: Address[] = addr.kind() === "ipv6" ? [addr, ...embeddedIPv4(addr as ipaddr.IPv6)] : [addr];
    return judged.every((a) => !within(a, this.deny) && (within(a, this.allow) || !within(a, this.refused)));
  }

  /**
   * Resolves the URL's host once and checks every address; the request then goes to the checked
   * addresses themselves (Host header, and for https the TLS server name, kept), so a DNS answer
   * that changes later cannot send it anywhere else. One target per address, in the resolver's order.
   */
  async resolve(url: URL): Promise<{ targets: URL[]; host: string; serverName: string | null }> {
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new EgressRefused(`scheme ${url.protocol} is not allowed`);
    const hostname = url.hostname.replace(/^\[|\]$/g, "");
    const literal = isIP(hostname) !== 0;
    const addresses = literal ? [hostname] : await this.resolveHost(hostname).catch(() => []);
    if (addresses.length === 0) throw new EgressRefused(`cannot resolve ${hostname}`);
    const refused = addresses.find((a) => !this.allows(a));
    if (refused) throw new EgressRefused(`address ${refused} of ${hostname} is not allowed by the egress policy`);
    const targets = literal
      ? [new URL(url)]
      : addresses.map((a) => {
          const target = new URL(url);
          target.hostname = a.includes(":") ? `[${a}]` : a;
          return target;
        });
    return { targets, host: url.host, serverName: literal ? null : hostname };
  }

  /**
   * fetch with the policy, no redirects (a 3xx is returned as is) and a timeout. A refused
   * connection moves on to the host's next checked address (nothing was sent yet).
   */
  async fetch(url: string, init: BunFetchRequestInit & { timeoutMs: number }): Promise<Response> {
    const { targets, host, serverName } = await this.resolve(new URL(url));
    const headers = new Headers(init.headers);
    headers.set("host", host);
    const { timeoutMs, tls, ...rest } = init;
    // The certificate is checked against the name in the URL, not the address connected to.
    const tlsOptions = serverName && targets[0].protocol === "https:" ? { ...tls, serverName } : tls;
    const signal = AbortSignal.timeout(timeoutMs);
    for (let i = 0; ; i++) {
      try {
        return await fetch(targets[i], { ...rest, tls: tlsOptions, headers, redirect: "manual", signal });
      } catch (err) {
        if (i + 1 >= targets.length || (err as { code?: string }).code !== "ECONNREFUSED") throw err;
      }
    }
  }
}
