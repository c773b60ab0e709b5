// RADIUS packets for RFC 5176 (Dynamic Authorization: Disconnect and CoA), encoded and decoded
// with the attribute numbers and types of FreeRADIUS's dictionaries (radius-dictionary.generated.ts).
// npm's `radius` package was last published in 2018 and carries its own dictionaries, so the codec
// is here; test/isp/rfc5176.test.ts proves it against FreeRADIUS's radclient and server.
//
// Request Authenticator (RFC 5176 §2.3): MD5(Code ‖ Identifier ‖ Length ‖ 16 zero octets ‖
// Attributes ‖ Secret). Response Authenticator: MD5(Code ‖ Identifier ‖ Length ‖ Request
// Authenticator ‖ Attributes ‖ Secret). Message-Authenticator (RFC 3579 §3.2, RFC 5176 §3.3):
// HMAC-MD5 keyed by the secret over the packet with that attribute zeroed and, in a request, the
// authenticator zeroed; in a response, the request's authenticator in its place.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import ipaddr from "ipaddr.js";
import { ATTRIBUTES, VALUES } from "./radius-dictionary.generated";

export const CODES = {
  "Access-Request": 1,
  "Access-Accept": 2,
  "Access-Reject": 3,
  "Disconnect-Request": 40,
  "Disconnect-ACK": 41,
  "Disconnect-NAK": 42,
  "CoA-Request": 43,
  "CoA-ACK": 44,
  "CoA-NAK": 45,
} as const;
export type CodeName = keyof typeof CODES;
const CODE_NAMES = new Map<number, CodeName>(Object.entries(CODES).map(([k, v]) => [v, k as CodeName]));

const VENDOR_SPECIFIC = 26;
const MESSAGE_AUTHENTICATOR = 80;
const HEADER = 20;
const MAX_PACKET = 4096;

export interface Attribute {
  name: string;
  value: string | number;
}

export interface Packet {
  code: CodeName | number;
  identifier: number;
  authenticator: Buffer;
  attributes: Attribute[];
  /** Whether a Message-Authenticator was present and correct (decoding only). */
  messageAuthenticator?: "valid" | "absent";
}

export class RadiusCodecError extends Error {}

const byLowerName = new Map<string, string>(Object.keys(ATTRIBUTES).map((n) => [n.toLowerCase(), n]));
const byNumber = new Map<string, string>(Object.entries(ATTRIBUTES).map(([n, [v, c]]) => [`${v}:${c}`, n]));

/** The dictionary's spelling of an attribute name (names match case-insensitively), or null. */
export function dictionaryName(name: string): string | null {
  return byLowerName.get(name.toLowerCase()) ?? null;
}

function intValue(name: string, value: string | number, bits: 8 | 16 | 32 | 64, signed = false): bigint {
  let n: bigint;
  if (typeof value === "number") n = BigInt(Math.trunc(value));
  else if (/^-?\d+$/.test(value.trim())) n = BigInt(value.trim());
  else {
    const named = VALUES[name]?.[value.trim()];
    if (named === undefined) throw new RadiusCodecError(`${name}: '${value}' is not a number or a named value`);
    n = BigInt(named);
  }
  const max = signed ? 2n ** BigInt(bits - 1) - 1n : 2n ** BigInt(bits) - 1n;
  const min = signed ? -(2n ** BigInt(bits - 1)) : 0n;
  if (n < min || n > max) throw new RadiusCodecError(`${name}: ${n} is out of range`);
  return n;
}

function encodeValue(name: string, type: string, value: string | number): Buffer {
  const text = String(value);
  switch (type) {
    case "string":
      return Buffer.from(text, "utf8");
    case "octets":
      return /^0x([0-9a-f]{2})*$/i.test(text) ? Buffer.from(text.slice(2), "hex") : Buffer.from(text, "utf8");
    case "ipaddr": {
      if (!ipaddr.IPv4.isValidFourPartDecimal(text.trim())) throw new RadiusCodecError(`${name}: '${text}' is not an IPv4 address`);
      return Buffer.from(ipaddr.IPv4.parse(text.trim()).toByteArray());
    }
    case "ipv6addr": {
      if (!ipaddr.IPv6.isValid(text.trim())) throw new RadiusCodecError(`${name}: '${text}' is not an IPv6 address`);
      return Buffer.from(ipaddr.IPv6.parse(text.trim()).toByteArray());
    }
    case "ipv6prefix": {
      const [addr, len = "128"] = text.trim().split("/");
      const bits = Number(len);
      if (!ipaddr.IPv6.isValid(addr) || !/^\d{1,3}$/.test(len) || bits > 128) throw new RadiusCodecError(`${name}: '${text}' is not an IPv6 prefix`);
      // RFC 3162 §2.3: reserved, prefix length, then the prefix's significant octets.
      const bytes = ipaddr.IPv6.parse(addr).toByteArray().slice(0, Math.ceil(bits / 8));
      return Buffer.from([0, bits, ...bytes]);
    }
    case "date": {
      const seconds = /^\d+$/.test(text.trim()) ? Number(text) : Math.floor(Date.parse(text) / 1000);
      if (!Number.isFinite(seconds)) throw new RadiusCodecError(`${name}: '${text}' is not a date`);
      const b = Buffer.alloc(4);
      b.writeUInt32BE(Number(intValue(name, seconds, 32)));
      return b;
    }
    case "byte":
      return Buffer.from([Number(intValue(name, value, 8))]);
    case "short": {
      const b = Buffer.alloc(2);
      b.writeUInt16BE(Number(intValue(name, value, 16)));
      return b;
    }
    case "integer":
    case "signed": {
      const b = Buffer.alloc(4);
      if (type === "signed") b.writeInt32BE(Number(intValue(name, value, 32, true)));
      else b.writeUInt32BE(Number(intValue(name, value, 32)));
      return b;
    }
    case "integer64": {
      const b = Buffer.alloc(8);
      b.writeBigUInt64BE(intValue(name, value, 64));
      return b;
    }
  }
  throw new RadiusCodecError(`${name}: type ${type} cannot be encoded`);
}

function decodeValue(name: string, type: string, b: Buffer): string | number {
  switch (type) {
    case "string":
      return b.toString("utf8");
    case "ipaddr":
      if (b.length === 4) return ipaddr.fromByteArray([...b]).toString();
      break;
    case "ipv6addr":
      if (b.length === 16) return ipaddr.fromByteArray([...b]).toString();
      break;
    case "ipv6prefix":
      if (b.length >= 2 && b.length <= 18) {
        const bytes = Buffer.alloc(16);
        b.copy(bytes, 0, 2);
        return `${ipaddr.fromByteArray([...bytes]).toString()}/${b[1]}`;
      }
      break;
    case "integer":
    case "date":
      if (b.length === 4) return b.readUInt32BE();
      break;
    case "signed":
      if (b.length === 4) return b.readInt32BE();
      break;
    case "byte":
      if (b.length === 1) return b[0];
      break;
    case "short":
      if (b.length === 2) return b.readUInt16BE();
      break;
    case "integer64":
      if (b.length === 8) return Number(b.readBigUInt64BE());
      break;
  }
  return `0x${b.toString("hex")}`;
}

/** The named value of an integer attribute (Error-Cause 503 → "Session-Context-Not-Found"), if any. */
export function valueName(name: string, value: number): string | null {
  const values = VALUES[name];
  if (!values) return null;
  for (const [k, v] of Object.entries(values)) if (v === value) return k;
  return null;
}

function encodeAttribute(a: Attribute): Buffer {
  const name = dictionaryName(a.name);
  if (!name) throw new RadiusCodecError(`${a.name}: not in the dictionary`);
  const [vendor, code, type] = ATTRIBUTES[name];
  const value = encodeValue(name, type, a.value);
  if (vendor === 0) {
    if (value.length > 253) throw new RadiusCodecError(`${name}: value longer than 253 octets`);
    return Buffer.concat([Buffer.from([code, value.length + 2]), value]);
  }
  // RFC 2865 §5.26: Vendor-Specific, vendor id, then the vendor's own type-length-value.
  if (value.length > 247) throw new RadiusCodecError(`${name}: value longer than 247 octets`);
  const head = Buffer.alloc(8);
  head[0] = VENDOR_SPECIFIC;
  head[1] = value.length + 8;
  head.writeUInt32BE(vendor, 2);
  head[6] = code;
  head[7] = value.length + 2;
  return Buffer.concat([head, value]);
}

const md5 = (...parts: Buffer[]) => {
  const h = createHash("md5");
  for (const p of parts) h.update(p);
  return h.digest();
};

/**
 * Encodes a request (Disconnect-Request, CoA-Request): attributes, Message-Authenticator when
 * asked, then the Request Authenticator.
 */
export function encodeRequest(code: CodeName, identifier: number, attributes: Attribute[], secret: string, withMessageAuthenticator = true): Buffer {
  return encode(code, identifier, attributes, secret, withMessageAuthenticator, null);
}

/** Encodes a response (…-ACK, …-NAK) to the request whose authenticator is `requestAuthenticator`. */
export function encodeResponse(code: CodeName, identifier: number, attributes: Attribute[], secret: string, requestAuthenticator: Buffer, withMessageAuthenticator = true): Buffer {
  return encode(code, identifier, attributes, secret, withMessageAuthenticator, requestAuthenticator);
}

function encode(code: CodeName, identifier: number, attributes: Attribute[], secret: string, withMA: boolean, requestAuth: Buffer | null): Buffer {
  const attrs = attributes.map(encodeAttribute);
  if (withMA) attrs.unshift(Buffer.from([MESSAGE_AUTHENTICATOR, 18, ...new Array(16).fill(0)]));
  const body = Buffer.concat(attrs);
  const length = HEADER + body.length;
  if (length > MAX_PACKET) throw new RadiusCodecError("packet longer than 4096 octets");
  const packet = Buffer.alloc(length);
  packet[0] = CODES[code];
  packet[1] = identifier & 0xff;
  packet.writeUInt16BE(length, 2);
  (requestAuth ?? Buffer.alloc(16)).copy(packet, 4);
  body.copy(packet, HEADER);
  const key = Buffer.from(secret, "utf8");
  if (withMA) createHmac("md5", key).update(packet).digest().copy(packet, HEADER + 2);
  md5(packet, key).copy(packet, 4);
  return packet;
}

function parse(buf: Buffer): { code: number; identifier: number; authenticator: Buffer; attrs: { type: number; start: number; value: Buffer }[] } {
  if (buf.length < HEADER) throw new RadiusCodecError("shorter than a RADIUS header");
  const length = buf.readUInt16BE(2);
  if (length < HEADER || length > buf.length || length > MAX_PACKET) throw new RadiusCodecError("bad length");
  const attrs: { type: number; start: number; value: Buffer }[] = [];
  for (let i = HEADER; i < length; ) {
    if (i + 2 > length) throw new RadiusCodecError("truncated attribute");
    const len = buf[i + 1];
    if (len < 2 || i + len > length) throw new RadiusCodecError("bad attribute length");
    attrs.push({ type: buf[i], start: i, value: buf.subarray(i + 2, i + len) });
    i += len;
  }
  return { code: buf[0], identifier: buf[1], authenticator: Buffer.from(buf.subarray(4, 20)), attrs };
}

function decodeAttributes(attrs: { type: number; value: Buffer }[]): Attribute[] {
  const out: Attribute[] = [];
  for (const a of attrs) {
    if (a.type === MESSAGE_AUTHENTICATOR) continue;
    if (a.type === VENDOR_SPECIFIC && a.value.length >= 6) {
      const vendor = a.value.readUInt32BE(0);
      // Vendors whose VSAs are type-length-value of one octet each (every one in the dictionary).
      for (let i = 4; i + 2 <= a.value.length; ) {
        const vtype = a.value[i];
        const vlen = a.value[i + 1];
        if (vlen < 2 || i + vlen > a.value.length) break;
        const name = byNumber.get(`${vendor}:${vtype}`);
        const v = a.value.subarray(i + 2, i + vlen);
        out.push(name ? { name, value: decodeValue(name, ATTRIBUTES[name][2], v) } : { name: `Vendor-${vendor}-Attr-${vtype}`, value: `0x${v.toString("hex")}` });
        i += vlen;
      }
      continue;
    }
    const name = byNumber.get(`0:${a.type}`);
    out.push(name ? { name, value: decodeValue(name, ATTRIBUTES[name][2], a.value) } : { name: `Attr-${a.type}`, value: `0x${a.value.toString("hex")}` });
  }
  return out;
}

function checkMessageAuthenticator(buf: Buffer, attrs: { type: number; start: number; value: Buffer }[], secret: string, authenticatorInPlace: Buffer): "valid" | "absent" {
  const ma = attrs.find((a) => a.type === MESSAGE_AUTHENTICATOR);
  if (!ma) return "absent";
  if (ma.value.length !== 16) throw new RadiusCodecError("Message-Authenticator is not 16 octets");
  const copy = Buffer.from(buf.subarray(0, buf.readUInt16BE(2)));
  authenticatorInPlace.copy(copy, 4);
  copy.fill(0, ma.start + 2, ma.start + 18);
  const expected = createHmac("md5", Buffer.from(secret, "utf8")).update(copy).digest();
  if (!timingSafeEqual(expected, ma.value)) throw new RadiusCodecError("Message-Authenticator does not match");
  return "valid";
}

/** Decodes a Disconnect-Request or CoA-Request, checking its authenticators against `secret`. */
export function decodeRequest(buf: Buffer, secret: string): Packet {
  const p = parse(buf);
  const length = buf.readUInt16BE(2);
  const zeroed = Buffer.from(buf.subarray(0, length));
  zeroed.fill(0, 4, 20);
  if (!timingSafeEqual(md5(zeroed, Buffer.from(secret, "utf8")), p.authenticator)) throw new RadiusCodecError("Request Authenticator does not match");
  const ma = checkMessageAuthenticator(buf, p.attrs, secret, Buffer.alloc(16));
  return { code: CODE_NAMES.get(p.code) ?? p.code, identifier: p.identifier, authenticator: p.authenticator, attributes: decodeAttributes(p.attrs), messageAuthenticator: ma };
}

/**
 * Decodes a response to the request sent with `requestAuthenticator`; throws when its
 * authenticators do not prove it came from a holder of the secret.
 */
export function decodeResponse(buf: Buffer, secret: string, requestAuthenticator: Buffer): Packet {
  const p = parse(buf);
  const length = buf.readUInt16BE(2);
  const copy = Buffer.from(buf.subarray(0, length));
  requestAuthenticator.copy(copy, 4);
  if (!timingSafeEqual(md5(copy, Buffer.from(secret, "utf8")), p.authenticator)) throw new RadiusCodecError("Response Authenticator does not match");
  const ma = checkMessageAuthenticator(buf, p.attrs, secret, requestAuthenticator);
  return { code: CODE_NAMES.get(p.code) ?? p.code, identifier: p.identifier, authenticator: p.authenticator, attributes: decodeAttributes(p.attrs), messageAuthenticator: ma };
}
