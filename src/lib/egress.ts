// Outbound requests (webhook deliveries, the metric collector): no redirects, a timeout, and only
// to addresses the egress policy allows, checked on the address actually connected to.
// Default: loopback, link-local (cloud metadata included) and unspecified addresses are refused,
// everything else (the ISP's private networks included) is allowed. CORPADMIN_EGRESS_DENY always
// wins; CORPADMIN_EGRESS_ALLOW re-opens what the defaults refuse (tests allow loopback).
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { inCidrs, parseCidr, type ParsedCidr } from "./client-ip";

const DEFAULT_REFUSED = ["127.0.0.0/8", "::1/128", "169.254.0.0/16", "fe80::/10", "0.0.0.0/8", "::/128", "fd00:ec2::254/128"];

export class EgressRefused extends Error {}

function cidrs(list: string[], setting: string): ParsedCidr[] {
  return list.map((c) => {
    const p = parseCidr(c);
    if (!p) throw new Error(`invalid CIDR in ${setting}: ${c}`);
    return p;
  });
}

export class EgressPolicy {
  private allow: ParsedCidr[];
  private deny: ParsedCidr[];
  private refused = cidrs(DEFAULT_REFUSED, "defaults");

  constructor(allow: string[], deny: string[]) {
    this.allow = cidrs(allow, "CORPADMIN_EGRESS_ALLOW");
    this.deny = cidrs(deny, "CORPADMIN_EGRESS_DENY");
  }

  allows(address: string): boolean {
    if (inCidrs(address, this.deny)) return false;
    if (inCidrs(address, this.allow)) return true;
    return !inCidrs(address, this.refused);
  }

  /**
   * Resolves the URL's host and checks every address; for plain http the request then goes to
   * the checked address itself (Host header kept), so a DNS answer cannot change in between.
   */
  async resolve(url: URL): Promise<{ target: URL; host: string }> {
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new EgressRefused(`scheme ${url.protocol} is not allowed`);
    const hostname = url.hostname.replace(/^\[|\]$/g, "");
    const addresses = isIP(hostname) ? [hostname] : (await lookup(hostname, { all: true, verbatim: true }).catch(() => [])).map((a) => a.address);
    if (addresses.length === 0) throw new EgressRefused(`cannot resolve ${hostname}`);
    const refused = addresses.find((a) => !this.allows(a));
    if (refused) throw new EgressRefused(`address ${refused} of ${hostname} is not allowed by the egress policy`);
    const target = new URL(url);
    if (url.protocol === "http:" && !isIP(hostname)) target.hostname = addresses[0].includes(":") ? `[${addresses[0]}]` : addresses[0];
    return { target, host: url.host };
  }

  /** fetch with the policy, no redirects (a 3xx is returned as is) and a timeout. */
  async fetch(url: string, init: RequestInit & { timeoutMs: number }): Promise<Response> {
    const { target, host } = await this.resolve(new URL(url));
    const headers = new Headers(init.headers);
    headers.set("host", host);
    const { timeoutMs, ...rest } = init;
    return fetch(target, { ...rest, headers, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
  }
}
