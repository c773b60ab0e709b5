// Shared pieces of the webhook tests: real HTTP receivers on 127.0.0.1, an independent Standard
// Webhooks verifier, and event production straight into a corporation's outbox.
import { recordEvent, type EventGroup } from "../../src/core/events";
import { newId } from "../../src/lib/ids";
import type { TestApp } from "./helpers";

export { waitFor } from "./wait";

export const LOOPBACK_ALLOWED = { CORPADMIN_EGRESS_ALLOW: "127.0.0.0/8,::1/128" };

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A receiver whose answer the test sets per request; every request is recorded on arrival. */
export function receiver(answer: (r: Received, n: number) => Response | Promise<Response> = () => new Response("ok")) {
  const requests: Received[] = [];
  let respond = answer;
  let inFlight = 0;
  let maxInFlight = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const r: Received = { path: new URL(req.url).pathname, headers: Object.fromEntries(req.headers), body: await req.text() };
      requests.push(r);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        return await respond(r, requests.length);
      } finally {
        inFlight--;
      }
    },
  });
  return {
    server,
    requests,
    url: (path = "/hook") => `http://127.0.0.1:${server.port}${path}`,
    set(fn: typeof answer) {
      respond = fn;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    stop: () => server.stop(true),
  };
}

/**
 * The Standard Webhooks check, written from the specification and not from the sender's code:
 * signed content `${id}.${timestamp}.${body}`, HMAC-SHA256 keyed with the base64-decoded secret
 * after `whsec_`, any of the space-separated `v1,<base64>` signatures matching, and a timestamp
 * within five minutes of the receiver's clock.
 */
export async function verifyStandardWebhook(secret: string, headers: Record<string, string>, body: string, nowMs: number): Promise<boolean> {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (!id || !timestamp || !signatures || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > 300) return false;
  const keyBytes = Uint8Array.from(atob(secret.slice("whsec_".length)), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`)));
  const expected = btoa(String.fromCharCode(...mac));
  return signatures.split(" ").some((s) => {
    const [version, sig] = s.split(",");
    return version === "v1" && sig === expected;
  });
}

/** Records an event in the corporation's outbox the way modules do, then signals the commit. */
export async function emit(t: TestApp, corpId: string, type: EventGroup, data: Record<string, unknown>, signal = true): Promise<string> {
  const id = (data.id as string) ?? newId();
  await t.ctx.store.tenant(corpId).write((tx) => recordEvent(tx, type, id, { id, ...data }));
  if (signal) t.ctx.events.committed(corpId);
  return id;
}

/** A clock the test moves by hand. */
export function manualClock(start = Date.parse("2026-03-01T12:00:00.000Z")) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

export const FAST = { tickMs: 10, sweepMs: 100, socketCheckMs: 50 };
