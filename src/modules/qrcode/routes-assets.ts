// /api/qrcode/logo, /api/qrcode/campaign and /api/qrcode/category rows.
import { Elysia, t } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard } from "../auth/guard";
import * as assets from "./assets";
import { QrCampaign, QrCampaignInput, QrCategory, QrCategoryInput, QrLogo, QrLogoInput } from "./model";

const QrLogoListed = t.Omit(QrLogo, ["data"]);

export function assetRoutes(ctx: AppContext) {
  const auth = "platform.qrcode" as const;
  return new Elysia({ name: "qrcode-assets", prefix: "/api/qrcode", tags: ["QRCode"] })
    .use(authGuard(ctx))
    .get("/logo", ({ tenantDb, query }) => assets.listLogos(tenantDb, query), {
      auth,
      query: ListQuery,
      response: { 200: ListOf(QrLogoListed) },
      detail: { summary: "List logos (without their data)" },
    })
    .post("/logo", ({ tenantDb, body, set }) => created(set, "/api/qrcode/logo", assets.createLogo(tenantDb, body)), {
      auth,
      body: QrLogoInput,
      response: { 200: QrLogo },
      detail: { summary: "Upload a logo (PNG or JPEG, at most 512 KiB)" },
    })
    .get("/logo/:id", ({ tenantDb, params }) => assets.logoView(assets.findLogo(tenantDb, params.id), true), {
      auth,
      params: IdParams,
      response: { 200: QrLogo },
      detail: { summary: "Get a logo, with its data" },
    })
    .put("/logo/:id", ({ tenantDb, params, body }) => assets.updateLogo(tenantDb, params.id, body), {
      auth,
      params: IdParams,
      body: QrLogoInput,
      response: { 200: QrLogo },
      detail: { summary: "Update a logo" },
    })
    .delete(
      "/logo/:id",
      ({ tenantDb, params, set }) => {
        assets.deleteLogo(tenantDb, params.id);
        noContent(set);
      },
      { auth, params: IdParams, detail: { summary: "Delete a logo" } },
    )
    .get("/campaign", ({ tenantDb, query }) => assets.listCampaigns(tenantDb, query), {
      auth,
      query: ListQuery,
      response: { 200: ListOf(QrCampaign) },
      detail: { summary: "List campaigns" },
    })
    .post("/campaign", ({ tenantDb, body, set }) => created(set, "/api/qrcode/campaign", assets.createCampaign(tenantDb, body)), {
      auth,
      body: QrCampaignInput,
      response: { 200: QrCampaign },
      detail: { summary: "Create a campaign" },
    })
    .get("/campaign/:id", ({ tenantDb, params }) => assets.findCampaign(tenantDb, params.id), {
      auth,
      params: IdParams,
      response: { 200: QrCampaign },
      detail: { summary: "Get a campaign" },
    })
    .put("/campaign/:id", ({ tenantDb, params, body }) => assets.updateCampaign(tenantDb, params.id, body), {
      auth,
      params: IdParams,
      body: QrCampaignInput,
      response: { 200: QrCampaign },
      detail: { summary: "Update a campaign" },
    })
    .delete(
      "/campaign/:id",
      ({ tenantDb, params, set }) => {
        assets.deleteCampaign(tenantDb, params.id);
        noContent(set);
      },
      { auth, params: IdParams, detail: { summary: "Delete a campaign" } },
    )
    .get("/category", ({ tenantDb, query }) => assets.listCategories(tenantDb, query), {
      auth,
      query: ListQuery,
      response: { 200: ListOf(QrCategory) },
      detail: { summary: "List categories" },
    })
    .post("/category", ({ tenantDb, body, set }) => created(set, "/api/qrcode/category", assets.createCategory(tenantDb, body)), {
      auth,
      body: QrCategoryInput,
      response: { 200: QrCategory },
      detail: { summary: "Create a category" },
    })
    .get("/category/:id", ({ tenantDb, params }) => assets.findCategory(tenantDb, params.id), {
      auth,
      params: IdParams,
      response: { 200: QrCategory },
      detail: { summary: "Get a category" },
    })
    .put("/category/:id", ({ tenantDb, params, body }) => assets.updateCategory(tenantDb, params.id, body), {
      auth,
      params: IdParams,
      body: QrCategoryInput,
      response: { 200: QrCategory },
      detail: { summary: "Update a category" },
    })
    .delete(
      "/category/:id",
      ({ tenantDb, params, set }) => {
        assets.deleteCategory(tenantDb, params.id);
        noContent(set);
      },
      { auth, params: IdParams, detail: { summary: "Delete a category" } },
    );
}
