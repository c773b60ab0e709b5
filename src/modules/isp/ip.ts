// Strict IP address and CIDR parsing for NAS addresses, pools and RADIUS requests.
import ipaddr from "ipaddr.js";

/**
 * A single IP address in canonical text, or null: IPv4 only in dotted four-part decimal (ipaddr.js
 * would also take `10` or `0x0a.1`), IPv6 in RFC 5952 form, an IPv4-mapped IPv6 address as IPv4.
 */
export function canonicalIp(text: string): string | null {
  const s = text.trim().replace(/^\[(.*)\]$/, "$1");
  if (ipaddr.IPv4.isValidFourPartDecimal(s)) return ipaddr.IPv4.parse(s).toString();
  if (!s.includes(":") || !ipaddr.IPv6.isValid(s)) return null;
  const v6 = ipaddr.IPv6.parse(s);
  if (v6.zoneId) return null;
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address().toString() : v6.toRFC5952String();
}

const NEVER_A_SOURCE_V4: Record<string, string> = {
  unspecified: "is the unspecified network 0.0.0.0/8",
  broadcast: "is the broadcast address",
  multicast: "is a multicast address",
};

/**
 * Why a canonical address (canonicalIp) can never be the source of a NAS's RADIUS packets, or
 * null when it can: unspecified, broadcast, multicast and IPv4 class E (240.0.0.0/4, reserved)
 * addresses. Loopback, private and documentation addresses are real sources (a FreeRADIUS on the
 * same host, test networks).
 */
export function notASourceAddress(ip: string): string | null {
  if (ip.includes(":")) {
    const range = ipaddr.IPv6.parse(ip).range();
    if (range === "unspecified") return "is the unspecified address ::";
    if (range === "multicast") return "is a multicast address";
    return null;
  }
  const v4 = ipaddr.IPv4.parse(ip);
  const refusal = NEVER_A_SOURCE_V4[v4.range()];
  if (refusal) return refusal;
  return v4.octets[0] >= 240 ? "is in the reserved network 240.0.0.0/4" : null;
}

/**
 * A CIDR of the given IP version in canonical form (host bits cleared), or an error message.
 * A bare address is a single host (/32 or /128).
 */
export function canonicalCidr(text: string, version: 4 | 6): { cidr: string } | { error: string } {
  const [addrText, bitsText, extra] = text.trim().split("/");
  if (extra !== undefined) return { error: "is not a CIDR" };
  if (version === 4) {
    if (!ipaddr.IPv4.isValidFourPartDecimal(addrText)) return { error: ipaddr.IPv6.isValid(addrText) ? "is an IPv6 network, not IPv4" : "is not an IPv4 CIDR" };
  } else if (!addrText.includes(":") || !ipaddr.IPv6.isValid(addrText) || ipaddr.IPv6.parse(addrText).zoneId) {
    return { error: ipaddr.IPv4.isValidFourPartDecimal(addrText) ? "is an IPv4 network, not IPv6" : "is not an IPv6 CIDR" };
  }
  const max = version === 4 ? 32 : 128;
  let bits = max;
  if (bitsText !== undefined) {
    if (!/^\d{1,3}$/.test(bitsText) || Number(bitsText) > max) return { error: `has a prefix length outside 0..${max}` };
    bits = Number(bitsText);
  }
  const net =
    version === 4
      ? ipaddr.IPv4.networkAddressFromCIDR(`${addrText}/${bits}`).toString()
      : ipaddr.IPv6.networkAddressFromCIDR(`${addrText}/${bits}`).toRFC5952String();
  return { cidr: `${net}/${bits}` };
}
