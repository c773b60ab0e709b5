// The QRCode group (routes.md): codes, images, logos, campaigns, categories, scan analytics and
// the public redirect GET /q/{slug}, which lives outside /api.
import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { AccessRecorder } from "./recorder";
import { redirectModule, SlugCache } from "./redirect";
import { assetRoutes } from "./routes-assets";
import { codeRoutes } from "./routes-codes";

export function qrcodeModule(ctx: AppContext) {
  const slugs = new SlugCache(ctx);
  const recorder = new AccessRecorder(ctx);
  // Registered before the databases close (closers run in reverse), so the last scans are written.
  ctx.onClose(() => recorder.close());
  return new Elysia({ name: "qrcode" })
    .use(redirectModule(ctx, slugs, recorder))
    .use(assetRoutes(ctx))
    .use(codeRoutes({ ctx, slugs }));
}
