// The QRCode group (routes.md): codes, images, logos, campaigns, categories, scan analytics and
// the public redirect GET /q/{slug}, which lives outside /api.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import type { EdgeRoutes } from "../../lib/edge";
import { AccessRecorder } from "./recorder";
import { assetRoutes } from "./assets-routes";
import { codeRoutes } from "./codes-routes";
import { redirectHandler, redirectRoutes } from "./redirect-routes";
import { SlugCache } from "./slug-cache";

export function qrcodeModule(ctx: AppContext, edge?: EdgeRoutes) {
  const slugs = new SlugCache(ctx);
  const recorder = new AccessRecorder(ctx);
  // Registered before the databases close (closers run in reverse), so the last scans are written.
  ctx.onClose(() => recorder.close());
  const redirect = redirectHandler(ctx, slugs, recorder);
  // The server answers the redirect from Bun's router (src/lib/edge.ts); app.handle uses the route.
  edge?.get("/q/:slug", (request, params, peer) => redirect(params.slug, request, peer));
  return new Elysia({ name: "qrcode" })
    .use(redirectRoutes(redirect))
    .use(assetRoutes(ctx))
    .use(codeRoutes({ ctx }));
}
