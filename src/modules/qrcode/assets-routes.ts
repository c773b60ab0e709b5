// /api/qrcode/logo, /api/qrcode/campaign and /api/qrcode/category rows.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { created, noContent } from "../../lib/http";
import { IdParams, ListOf, ListQuery } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import * as assets from "./assets-service";
import { QrCampaign, QrCampaignInput, QrCategory, QrCategoryInput, QrLogo, QrLogoInput, derived } from "./model";

export function assetRoutes(ctx: AppContext) {
  const auth = "platform.qrcode" as const;
  return new Elysia({ name: "qrcode-assets", prefix: "/api/qrcode", tags: ["QRCode"] })
    .use(authGuard(ctx))
    .get("/logo", ({ tenant, query }) => assets.listLogos(tenant, query), {
      auth,
      query: ListQuery,
      response: { 200: ListOf(derived.QrLogoListed) },
      detail: { summary: "List logos (without their data)" },
    })
    .post("/logo", async ({ tenant, body, set }) => created(set, "/api/qrcode/logo", await assets.createLogo(tenant, body)), {
      auth,
      body: QrLogoInput,
      response: { 200: QrLogo },
      detail: { summary: "Upload a logo (PNG or JPEG, at most 512 KiB)" },
    })
    .get("/logo/:id", ({ tenant, params }) => assets.getLogo(tenant, params.id), {
      auth,
      params: IdParams,
      response: { 200: QrLogo },
      detail: { summary: "Get a logo, with its data" },
    })
    .put("/logo/:id", ({ tenant, params, body }) => assets.updateLogo(tenant, params.id, body), {
      auth,
      params: IdParams,
      body: QrLogoInput,
      response: { 200: QrLogo },
      detail: { summary: "Update a logo" },
    })
    .delete(
      "/logo/:id",
      async ({ tenant, params, set }) => {
        await assets.deleteLogo(tenant, params.id);
        noContent(set);
      },
      { auth, params: IdParams, detail: { summary: "Delete a logo" } },
    )
    .get("/campaign", ({ tenant, query }) => assets.listCampaigns(tenant, query), {
      auth,
      query: ListQuery,
      response: { 200: ListOf(QrCampaign) },
      detail: { summary: "List campaigns" },
    })
    .post("/campaign", async ({ tenant, body, set }) => created(set, "/api/qrcode/campaign", await assets.createCampaign(tenant, body)), {
      auth,
      body: QrCampaignInput,
      response: { 200: QrCampaign },
      detail: { summary: "Create a campaign" },
    })
    .get("/campaign/:id", ({ tenant, params }) => assets.getCampaign(tenant, params.id), {
      auth,
      params: IdParams,
      response: { 200: QrCampaign },
      detail: { summary: "Get a campaign" },
    })
    .put("/campaign/:id", ({ tenant, params, body }) => assets.updateCampaign(tenant, params.id, body), {
      auth,
      params: IdParams,
      body: QrCampaignInput,
      response: { 200: QrCampaign },
      detail: { summary: "Update a campaign" },
    })
    .delete(
      "/campaign/:id",
      async ({ tenant, params, set }) => {
        await assets.deleteCampaign(tenant, params.id);
        noContent(set);
      },
      { auth, params: IdParams, detail: { summary: "Delete a campaign" } },
    )
    .get("/category", ({ tenant, query }) => assets.listCategories(tenant, query), {
      auth,
      query: ListQuery,
      response: { 200: ListOf(QrCategory) },
      detail: { summary: "List categories" },
    })
    .post("/category", async ({ tenant, body, set }) => created(set, "/api/qrcode/category", await assets.createCategory(tenant, body)), {
      auth,
      body: QrCategoryInput,
      response: { 200: QrCategory },
      detail: { summary: "Create a category" },
    })
    .get("/category/:id", ({ tenant, params }) => assets.getCategory(tenant, params.id), {
      auth,
      params: IdParams,
      response: { 200: QrCategory },
      detail: { summary: "Get a category" },
    })
    .put("/category/:id", ({ tenant, params, body }) => assets.updateCategory(tenant, params.id, body), {
      auth,
      params: IdParams,
      body: QrCategoryInput,
      response: { 200: QrCategory },
      detail: { summary: "Update a category" },
    })
    .delete(
      "/category/:id",
      async ({ tenant, params, set }) => {
        await assets.deleteCategory(tenant, params.id);
        noContent(set);
      },
      { auth, params: IdParams, detail: { summary: "Delete a category" } },
    );
}
