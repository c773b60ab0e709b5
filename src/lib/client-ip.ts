// The client address: the socket peer; X-Forwarded-For only when the peer is a trusted proxy
// (then the right-most address that is not itself a trusted proxy).
import ipaddr from "ipaddr.js";

export type ParsedCidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses a CIDR or a bare address (/32 or /128); IPv4-mapped IPv6 addresses become IPv4. */
export function parseCidr(text: string): ParsedCidr | null {
  try {
    if (text.includes("/")) {
      const [addr, bits] = ipaddr.parseCIDR(text);
      if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
        return [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96];
      }
      return [addr, bits];
    }
    const addr = normalizeAddress(text);
    return addr ? [addr, addr.kind() === "ipv4" ? 32 : 128] : null;
  } catch {
    return null;
  }
}

export function normalizeAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  try {
    const addr = ipaddr.parse(text.replace(/^\[|\]$/g, ""));
    if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress()) return (addr as ipaddr.IPv6).toIPv4Address();
    return addr;
  } catch {
    return null;
  }
}

export function inCidrs(address: string, cidrs: ParsedCidr[]): boolean {
  const addr = normalizeAddress(address);
  if (!addr) return false;
  return cidrs.some(([net, bits]) => net.kind() === addr.kind() && addr.match([net, bits] as any));
}

export type ClientIpResolver = (request: Request, peer: string | null) => string;

export function clientIpResolver(trustedProxies: string[]): ClientIpResolver {
  const trusted = trustedProxies.map((c) => {
    const p = parseCidr(c);
    if (!p) throw new Error(`invalid trusted proxy CIDR: ${c}`);
    return p;
  });
  return (request, peer) => {
    const direct = peer ?? "127.0.0.1";
    // Hot path (every request of /q/{slug}): without trusted proxies, only an IPv4-mapped IPv6
    // peer needs rewriting, and that is a prefix check, not a parse.
    if (trusted.length === 0) return direct.startsWith("::ffff:") && direct.includes(".") ? direct.slice(7) : direct;
    if (!inCidrs(direct, trusted)) return normalizeAddress(direct)?.toString() ?? direct;
    const forwarded = request.headers.get("x-forwarded-for");
    if (!forwarded) return normalizeAddress(direct)?.toString() ?? direct;
    const hops = forwarded.split(",").map((s) => s.trim()).filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) {
      const addr = normalizeAddress(hops[i]);
      if (!addr) break;
      if (!inCidrs(addr.toString(), trusted)) return addr.toString();
    }
    return normalizeAddress(direct)?.toString() ?? direct;
  };
}
