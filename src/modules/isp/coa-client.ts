// Sends one RFC 5176 request (Disconnect-Request or CoA-Request) over UDP and waits for its
// answer: the same packet (same Identifier and authenticator, RFC 5176 §2.3) up to `attempts`
// times, `intervalMs` apart. Only an answer whose Response Authenticator proves the NAS holds the
// secret counts; anything else arriving on the socket is ignored.
import ipaddr from "ipaddr.js";
import { randomInt } from "node:crypto";
import { toIso } from "../../lib/time";
import { decodeResponse, encodeRequest, type Attribute } from "./rfc5176";

export type DynamicAuthKind = "disconnect" | "coa";

export interface DynamicAuthTarget {
  ip: string;
  port: number;
  secret: string;
}

export interface DynamicAuthResult {
  kind: DynamicAuthKind;
  outcome: "ack" | "nak" | "timeout";
  /** The NAK's Error-Cause (RFC 5176 §3.5), null otherwise. */
  error_cause: number | null;
  /** Requests sent. */
  attempts: number;
  at: string;
}

const REQUEST = { disconnect: "Disconnect-Request", coa: "CoA-Request" } as const;
const ACK = { disconnect: "Disconnect-ACK", coa: "CoA-ACK" } as const;
const NAK = { disconnect: "Disconnect-NAK", coa: "CoA-NAK" } as const;

export async function sendDynamicAuth(
  kind: DynamicAuthKind,
  target: DynamicAuthTarget,
  attributes: Attribute[],
  options: { attempts?: number; intervalMs: number; now?: () => number },
): Promise<DynamicAuthResult> {
  const attempts = options.attempts ?? 3;
  const now = options.now ?? Date.now;
  const packet = encodeRequest(REQUEST[kind], randomInt(256), attributes, target.secret);
  const requestAuth = packet.subarray(4, 20);
  const identifier = packet[1];
  let settle: (r: { outcome: "ack" | "nak"; error_cause: number | null }) => void = () => {};
  const answered = new Promise<{ outcome: "ack" | "nak"; error_cause: number | null }>((resolve) => (settle = resolve));
  const v6 = ipaddr.IPv6.isValid(target.ip) && !ipaddr.IPv4.isValidFourPartDecimal(target.ip);
  const socket = await Bun.udpSocket({
    hostname: v6 ? "::" : "0.0.0.0",
    port: 0,
    socket: {
      data(_sock, buf) {
        const data = Buffer.from(buf);
        if (data.length < 20 || data[1] !== identifier) return;
        try {
          const reply = decodeResponse(data, target.secret, requestAuth);
          if (reply.code === ACK[kind]) settle({ outcome: "ack", error_cause: null });
          else if (reply.code === NAK[kind]) {
            const cause = reply.attributes.find((a) => a.name === "Error-Cause")?.value;
            settle({ outcome: "nak", error_cause: typeof cause === "number" ? cause : null });
          }
        } catch {
          // Not signed with the secret: not an answer.
        }
      },
    },
  });
  let sent = 0;
  try {
    for (let i = 0; i < attempts; i++) {
      socket.send(packet, target.port, target.ip);
      sent++;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = await Promise.race([answered, new Promise<null>((r) => (timer = setTimeout(() => r(null), options.intervalMs)))]);
      clearTimeout(timer);
      if (waited) return { kind, ...waited, attempts: sent, at: toIso(now()) };
    }
    return { kind, outcome: "timeout", error_cause: null, attempts: sent, at: toIso(now()) };
  } finally {
    socket.close();
  }
}
