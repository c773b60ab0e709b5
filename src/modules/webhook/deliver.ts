// One signed webhook POST (Standard Webhooks): the signature, the body template and the outcome of
// an attempt. No database here: the dispatcher (jobs.ts) and the test event (service.ts) use it.
import { createHmac } from "node:crypto";
import type { AppContext } from "../../core/context";
import { EgressRefused } from "../../lib/egress";

/** Longest Retry-After honoured; beyond it the receiver is treated as gone for the day. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** What a delivery is sent to (a webhook row's columns). */
export interface Target {
  id: string;
  target: string;
  secret: string;
  body_content: string | null;
}

/** `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, key = base64-decoded secret after `whsec_`. */
export function signature(secret: string, msgId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${msgId}.${timestamp}.${body}`).digest("base64")}`;
}

/**
 * body_content: every `{{path.to.field}}` resolved against the payload. Strings are JSON-escaped
 * without their quotes (so they fit inside a quoted template string), numbers, booleans and null
 * as literals, objects and arrays as JSON, missing paths empty.
 */
export function renderTemplate(template: string, payload: unknown): string {
  return template.replace(/\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g, (_m, path: string) => {
    let v: unknown = payload;
    for (const key of path.split(".")) {
      if (v === null || typeof v !== "object" || !Object.hasOwn(v as object, key)) return "";
      v = (v as Record<string, unknown>)[key];
    }
    if (v === undefined) return "";
    if (typeof v === "string") return JSON.stringify(v).slice(1, -1);
    return JSON.stringify(v);
  });
}

/** Seconds or an HTTP date; null when absent or unreadable. */
function retryAfterMs(header: string | null, now: number): number | null {
  if (!header) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

function describeFailure(err: unknown, timeoutMs: number): string {
  if (err instanceof EgressRefused) return `refused by the egress policy: ${err.message}`;
  const name = (err as { name?: string })?.name;
  if (name === "TimeoutError" || name === "AbortError") return `no answer within ${timeoutMs / 1000} s`;
  return `request failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 500);
}

/** The first bytes of a refusal's body as one line of printable text (at most 200 characters). */
async function bodyExcerpt(res: Response): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // a body cut short: what arrived is enough
  } finally {
    reader.cancel().catch(() => {});
  }
  const text = new TextDecoder().decode(Buffer.concat(chunks).subarray(0, EXCERPT_BYTES));
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f\s]+/g, " ").trim().slice(0, 200);
}

const EXCERPT_BYTES = 512;

export interface Attempt {
  ok: boolean;
  responseStatus: number | null;
  error: string | null;
  retryAfterMs: number | null;
}

/**
 * One signed POST of `payload` (or the webhook's body template rendered from it) with the
 * Standard Webhooks headers; the outcome, never an exception. Used by the dispatcher and by the
 * test event (which is sent at once, whatever the webhook's status).
 */
export async function deliverOnce(
  ctx: Pick<AppContext, "egress" | "now" | "dispatchTuning">,
  hook: Pick<Target, "target" | "secret" | "body_content">,
  msgId: string,
  payload: string,
): Promise<Attempt> {
  const timeoutMs = ctx.dispatchTuning.deliveryTimeoutMs;
  let body = payload;
  if (hook.body_content) {
    try {
      body = renderTemplate(hook.body_content, JSON.parse(payload));
    } catch {
      body = payload;
    }
  }
  const timestamp = Math.floor(ctx.now() / 1000);
  try {
    const res = await ctx.egress.fetch(hook.target, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "corpadmin-webhooks",
        "webhook-id": msgId,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signature(hook.secret, msgId, timestamp, body),
      },
      body,
      timeoutMs,
    });
    const ok = res.status >= 200 && res.status < 300;
    // A success's body is not read; a refusal's first bytes go into the log (why it refused).
    const excerpt = ok ? "" : await bodyExcerpt(res);
    if (ok) await res.body?.cancel().catch(() => {});
    let error: string | null = null;
    if (!ok) error = res.status >= 300 && res.status < 400 ? `HTTP ${res.status}: redirects are not followed` : `HTTP ${res.status}${excerpt ? `: ${excerpt}` : ""}`;
    const retry = res.status === 429 || res.status === 503 ? retryAfterMs(res.headers.get("retry-after"), ctx.now()) : null;
    return { ok, responseStatus: res.status, error, retryAfterMs: retry };
  } catch (err) {
    return { ok: false, responseStatus: null, error: describeFailure(err, timeoutMs), retryAfterMs: null };
  }
}

