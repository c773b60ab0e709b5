// GET /api/search (routes.md, "Network operations additions"): one search box across the
// corporation, for any valid token; each kind only for callers who may read its list.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { actionOf, authGuard } from "../../http/guard";
import { SearchQuery, SearchResult } from "./model";
import { search } from "./service";

export function searchModule(ctx: AppContext) {
  return new Elysia({ name: "search", prefix: "/api", tags: ["Search"] })
    .use(authGuard(ctx))
    .get("/search", ({ tenant, principal, query, request }) => search(ctx, tenant, principal, (path) => actionOf(request, path), query.q, query.limit ?? 20), {
      // Any token; the corporation's door (tenant: the gate of its status, as every area row).
      auth: { guard: "token", tenant: true },
      query: SearchQuery,
      response: { 200: SearchResult },
      detail: {
        summary: "Search across the corporation",
        description:
          "Persons, contracts, online sessions, NAS, cities, products and QR codes whose list `?q` finds q (every word, in any order and field, folding case and accents; digits find documents; a contract also by its addresses and its online sessions' IP and MAC). Persons and contracts first; only kinds whose list the caller may read.",
      },
    });
}
