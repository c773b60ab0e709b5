// /api/qrcode rows for codes: CRUD, active/inactive, image, CSV export, accesses and reports.
import { Elysia } from "elysia";
import { authGuard } from "../../http/guard";
import { created, noContent } from "../../lib/http";
import { invalid, notFound } from "../../lib/problem";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { allReport, codeReport, exportAccesses, listAccesses } from "./analytics-service";
import { codeView, createCode, deleteCode, exportCodes, getCode, imageSource, listCodes, setCodeStatus, updateCode, type QrDeps } from "./codes-service";
import { renderPng, renderSvg, type ImageOptions } from "./image";
import {
  AccessExportQuery,
  AccessListQuery,
  AllReport,
  AllReportQuery,
  ExportQuery,
  ImageQuery,
  QrAccess,
  QrCode,
  QrCodeInput,
  RangeQuery,
  Report,
} from "./model";

const CSV = "text/csv; charset=utf-8";
const csvResponse = (body: string | ReadableStream<Uint8Array>, filename: string) =>
  new Response(body, { headers: { "content-type": CSV, "content-disposition": `attachment; filename="${filename}"` } });

export function codeRoutes(deps: QrDeps) {
  const { ctx } = deps;
  const auth = "platform.qrcode" as const;
  return new Elysia({ name: "qrcode-codes", prefix: "/api", tags: ["QRCode"] })
    .use(authGuard(ctx))
    .get("/qrcode", ({ tenant, query }) => listCodes(deps, tenant, query), {
      auth,
      query: ListQuery,
      response: { 200: ListOf(QrCode) },
      detail: { summary: "List QR codes" },
    })
    .post("/qrcode", async ({ tenant, principal, body, set }) => created(set, "/api/qrcode", await createCode(deps, tenant, principal.corpId, body)), {
      auth,
      body: QrCodeInput,
      response: { 200: QrCode },
      detail: { summary: "Create a QR code (static: encodes content; dynamic: encodes its /q/{slug} URL)" },
    })
    .get(
      "/qrcode/export",
      async ({ tenant, query }) => csvResponse(await exportCodes(deps, tenant, query), "qrcodes.csv"),
      {
        auth,
        query: ExportQuery,
        detail: {
          summary: "Export the QR codes",
          responses: { 200: { description: "CSV: id,name,kind,content,target,slug,url,campaign,category,status,scans,created_at", content: { "text/csv": { schema: { type: "string" } } } } },
        },
      },
    )
    .get("/qrcode/report", ({ tenant, principal, query }) => allReport(tenant, query, principal.corp.timezone, ctx.now()), {
      auth,
      query: AllReportQuery,
      response: { 200: AllReport },
      detail: { summary: "Report for all codes, grouped by code, campaign or category" },
    })
    .get("/qrcode/:id", ({ tenant, params }) => getCode(deps, tenant, params.id), {
      auth,
      params: IdParams,
      response: { 200: QrCode },
      detail: { summary: "Get a QR code" },
    })
    .put("/qrcode/:id", ({ tenant, params, body }) => updateCode(deps, tenant, params.id, body), {
      auth,
      params: IdParams,
      body: QrCodeInput,
      response: { 200: QrCode },
      detail: { summary: "Update a QR code (a dynamic code's target can change, its image does not)" },
    })
    .delete(
      "/qrcode/:id",
      async ({ tenant, principal, params, set }) => {
        await deleteCode(deps, tenant, principal.corpId, params.id);
        noContent(set);
      },
      { auth, params: IdParams, detail: { summary: "Delete a QR code with its accesses; the slug is freed" } },
    )
    .put("/qrcode/:id/active", ({ tenant, params }) => setCodeStatus(deps, tenant, params.id, true), {
      auth,
      params: IdParams,
      response: { 200: QrCode },
      detail: { summary: "Activate a QR code" },
    })
    .put("/qrcode/:id/inactive", ({ tenant, params }) => setCodeStatus(deps, tenant, params.id, false), {
      auth,
      params: IdParams,
      response: { 200: QrCode },
      detail: { summary: "Inactivate a QR code (its /q/{slug} answers 410)" },
    })
    .get(
      "/qrcode/:id/accesses",
      ({ tenant, principal, params, query }) => listAccesses(tenant, params.id, query, principal.corp.timezone),
      { auth, params: IdParams, query: AccessListQuery, response: { 200: ListOf(QrAccess) }, detail: { summary: "List the accesses (scans) of a QR code" } },
    )
    .get(
      "/qrcode/:id/accesses/export",
      async ({ tenant, principal, params, query }) =>
        csvResponse(await exportAccesses(tenant, params.id, query, principal.corp.timezone), `qrcode-${params.id}-accesses.csv`),
      {
        auth,
        params: IdParams,
        query: AccessExportQuery,
        detail: {
          summary: "Export the accesses of a QR code",
          responses: { 200: { description: "CSV: at,ip,user_agent,referer", content: { "text/csv": { schema: { type: "string" } } } } },
        },
      },
    )
    .get(
      "/qrcode/:id/report",
      ({ tenant, principal, params, query }) => codeReport(tenant, params.id, query, principal.corp.timezone, ctx.now()),
      { auth, params: IdParams, query: RangeQuery, response: { 200: Report }, detail: { summary: "Report for one QR code" } },
    )
    .get(
      "/qrcode/:id/image",
      async ({ tenant, params, query }) => {
        const { code, logo } = await imageSource(tenant, params.id, !!query.logo);
        const size = query.size ?? 512;
        const margin = query.margin ?? 4;
        if (size < 64 || size > 4096) throw invalid("size", "must be from 64 to 4096");
        if (margin < 0 || margin > 16) throw invalid("margin", "must be from 0 to 16");
        if (query.logo) {
          if (!code.logo_id) throw invalid("logo", "the QR code has no logo");
          if (!logo) throw notFound("Logo");
        }
        const opts: ImageOptions = {
          size,
          margin,
          dark: (query.dark ?? "000000").replace("#", "").toLowerCase(),
          light: (query.light ?? "FFFFFF").replace("#", "").toLowerCase(),
          ecc: query.ecc ?? "M",
        };
        const text = codeView(ctx.config.publicUrl, code).encoded;
        const format = query.format ?? "png";
        const body = format === "png" ? renderPng(text, opts, logo) : await renderSvg(text, opts, logo);
        return new Response(body, {
          headers: {
            "content-type": format === "png" ? "image/png" : "image/svg+xml",
            "content-disposition": `attachment; filename="qrcode-${code.slug ?? code.id}.${format}"`,
          },
        });
      },
      {
        auth,
        params: IdParams,
        query: ImageQuery,
        detail: {
          summary: "Download the image of a QR code",
          responses: {
            200: {
              description: "The image (Content-Disposition: attachment)",
              content: { "image/png": { schema: { type: "string", format: "binary" } }, "image/svg+xml": { schema: { type: "string" } } },
            },
          },
        },
      },
    );
}
