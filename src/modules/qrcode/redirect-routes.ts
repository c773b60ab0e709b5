// GET /q/{slug}: the public redirect of dynamic codes, the hottest public path. A slug resolves
// through the slug cache (slug-cache.ts); the corporation's status comes from the corporation
// cache, which the corporations module keeps current, so blocking takes effect at once.
import { Elysia, t } from "elysia";
import type { AppContext } from "../../core/context";
import type { CorpRow } from "../../core/corp-cache";
import { Problem } from "../../lib/problem";
import type { AccessRecorder } from "./recorder";
import type { SlugCache, SlugEntry } from "./slug-cache";

const SLUG_RE = /^[A-Za-z0-9_-]{3,64}$/;

// Not even a problem answer may be cached: a code can come back (activated, corporation unblocked).
const noStore = { "cache-control": "no-store" };
const unknownSlug = () => new Problem(404, "not-found", "Not found", "QR code not found", undefined, noStore);
const goneSlug = (detail: string) => new Problem(410, "gone", "Gone", detail, undefined, noStore);

const MAX_HEADER_TEXT = 1024;
const clip = (v: string | null) => (v === null || v === "" ? null : v.length > MAX_HEADER_TEXT ? v.slice(0, MAX_HEADER_TEXT) : v);

/**
 * The redirect itself, shared by the Elysia route and the server's edge route (src/lib/edge.ts).
 * A cached slug is answered synchronously; only a cache miss returns a promise.
 */
export type Redirect = (slug: string, request: Request, peer: string | null) => Response | Promise<Response>;

export function redirectHandler(ctx: AppContext, slugs: SlugCache, recorder: AccessRecorder): Redirect {
  // A cached slug's answer headers, built once: a Response takes a copy of a Headers faster than it
  // reads an object's properties (measured 310 ns instead of 480 ns per answer, x-request-id added).
  const redirectHeaders = new WeakMap<SlugEntry, Headers>();
  function answer(entry: SlugEntry, corp: CorpRow, request: Request, peer: string | null): Response {
    if (corp.status === "BLOCKED") throw goneSlug("The QR code's corporation is blocked");
    if (!entry.active) throw goneSlug("The QR code is inactive");
    const h = request.headers;
    recorder.record(entry.corpId, entry.codeId, ctx.clientIp(request, peer), clip(h.get("user-agent")), clip(h.get("referer")));
    let headers = redirectHeaders.get(entry);
    if (!headers) redirectHeaders.set(entry, (headers = new Headers({ location: entry.target, "cache-control": "no-store" })));
    return new Response(null, { status: 302, headers });
  }

  async function load(slug: string, request: Request, peer: string | null): Promise<Response> {
    const entry = await slugs.load(slug);
    const corp = entry && (await ctx.corps.get(entry.corpId));
    if (!entry || !corp) throw unknownSlug();
    return answer(entry, corp, request, peer);
  }

  function cached(slug: string, entry: SlugEntry, corp: CorpRow | null, request: Request, peer: string | null): Response | Promise<Response> {
    if (!corp) {
      // The corporation was deleted (its slugs with it): look again in case the slug was reused.
      slugs.forget(slug);
      return load(slug, request, peer);
    }
    return answer(entry, corp, request, peer);
  }

  return (slug, request, peer) => {
    if (!SLUG_RE.test(slug)) throw unknownSlug();
    const entry = slugs.peek(slug);
    if (entry === undefined) return load(slug, request, peer);
    if (entry === null) throw unknownSlug();
    // A cached corporation is taken without an await (the usual case); only a miss reads.
    const corp = ctx.corps.peek(entry.corpId);
    if (corp === undefined) return ctx.corps.get(entry.corpId).then((c) => cached(slug, entry, c, request, peer));
    return cached(slug, entry, corp, request, peer);
  };
}

export function redirectRoutes(redirect: Redirect) {
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
