// GET /q/{slug}: the public redirect of dynamic codes, the hottest public path. A slug resolves
// through an in-memory cache (the platform slug index, then the corporation's code row on a miss)
// that every change to a code clears; the corporation's status comes from the corporation cache,
// which the corporations module keeps current, so blocking takes effect at once.
import { Elysia, t } from "elysia";
import type { AppContext } from "../../core/context";
import { Problem } from "../../lib/problem";
import type { AccessRecorder } from "./recorder";

export interface SlugEntry {
  corpId: string;
  codeId: string;
  target: string;
  active: boolean;
}

const SLUG_RE = /^[A-Za-z0-9_-]{3,64}$/;
/** Entries kept (unknown slugs included, as null); past it the cache starts over. */
const MAX_ENTRIES = 100_000;

export class SlugCache {
  private entries = new Map<string, SlugEntry | null>();

  constructor(private ctx: AppContext) {}

  get(slug: string): SlugEntry | null {
    const hit = this.entries.get(slug);
    if (hit !== undefined) return hit;
    const entry = this.load(slug);
    // A code whose slug is indexed but whose row is not committed yet is not remembered as unknown.
    if (entry !== undefined) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(slug, entry);
    }
    return entry ?? null;
  }

  /** null: unknown slug; undefined: indexed but not (or no longer) found in its corporation. */
  private load(slug: string): SlugEntry | null | undefined {
    const indexed = this.ctx.platform.$client.query("SELECT corp_id, qrcode_id FROM qr_slugs WHERE slug = ?").get(slug) as
      | { corp_id: string; qrcode_id: string }
      | null;
    if (!indexed) return null;
    if (!this.ctx.corps.get(indexed.corp_id)) return undefined;
    const code = this.ctx.tenants
      .get(indexed.corp_id)
      .$client.query("SELECT target, status FROM qr_codes WHERE id = ?")
      .get(indexed.qrcode_id) as { target: string | null; status: number } | null;
    if (!code || code.target === null) return undefined;
    return { corpId: indexed.corp_id, codeId: indexed.qrcode_id, target: code.target, active: code.status === 1 };
  }

  forget(slug: string): void {
    this.entries.delete(slug);
  }

  clear(): void {
    this.entries.clear();
  }
}

// Not even a problem answer may be cached: a code can come back (activated, corporation unblocked).
const noStore = { "cache-control": "no-store" };
const unknownSlug = () => new Problem(404, "not-found", "Not found", "QR code not found", undefined, noStore);
const goneSlug = (detail: string) => new Problem(410, "gone", "Gone", detail, undefined, noStore);

const MAX_HEADER_TEXT = 1024;
const clip = (v: string | null) => (v === null || v === "" ? null : v.length > MAX_HEADER_TEXT ? v.slice(0, MAX_HEADER_TEXT) : v);

/** The redirect itself, shared by the Elysia route and the server's edge route (src/lib/edge.ts). */
export type Redirect = (slug: string, request: Request, peer: string | null) => Response;

export function redirectHandler(ctx: AppContext, slugs: SlugCache, recorder: AccessRecorder): Redirect {
  return (slug, request, peer) => {
    if (!SLUG_RE.test(slug)) throw unknownSlug();
    let entry = slugs.get(slug);
    if (!entry) throw unknownSlug();
    let corp = ctx.corps.get(entry.corpId);
    if (!corp) {
      // The corporation was deleted (its slugs with it): look again in case the slug was reused.
      slugs.forget(slug);
      entry = slugs.get(slug);
      corp = entry ? ctx.corps.get(entry.corpId) : null;
      if (!entry || !corp) throw unknownSlug();
    }
    if (corp.status === "BLOCKED") throw goneSlug("The QR code's corporation is blocked");
    if (!entry.active) throw goneSlug("The QR code is inactive");
    const h = request.headers;
    recorder.record(entry.corpId, entry.codeId, ctx.clientIp(request, peer), clip(h.get("user-agent")), clip(h.get("referer")));
    return new Response(null, { status: 302, headers: { location: entry.target, "cache-control": "no-store" } });
  };
}

export function redirectModule(redirect: Redirect) {
  return new Elysia({ name: "qrcode-redirect", tags: ["QRCode"] }).get(
    "/q/:slug",
    ({ params, request, server }) => redirect(params.slug, request, server?.requestIP(request)?.address ?? null),
    {
      params: t.Object({ slug: t.String() }),
      detail: {
        summary: "Public redirect of a dynamic QR code",
        security: [],
        responses: { 302: { description: "Redirect to the target (Cache-Control: no-store)" }, 404: { description: "Unknown slug" }, 410: { description: "Inactive code or blocked corporation" } },
      },
    },
  );
}
