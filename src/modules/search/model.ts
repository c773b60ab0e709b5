// GET /api/search (routes.md, "Network operations additions"): request and response schemas.
import { t, type Static } from "elysia";
import { Uuid } from "../../lib/schemas";

export const SEARCH_KINDS = ["person", "contract", "session", "nas", "city", "product", "qrcode"] as const;
export type SearchKind = (typeof SEARCH_KINDS)[number];

export const SearchQuery = t.Object({
  q: t.String({ minLength: 2, maxLength: 100 }),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 50 })),
});
export type SearchQuery = Static<typeof SearchQuery>;

export const SearchHit = t.Object({
  kind: t.Union([t.Literal("person"), t.Literal("contract"), t.Literal("session"), t.Literal("nas"), t.Literal("city"), t.Literal("product"), t.Literal("qrcode")]),
  id: Uuid,
  title: t.String(),
  subtitle: t.Union([t.String(), t.Null()]),
});
export type SearchHit = Static<typeof SearchHit>;

export const SearchResult = t.Object({ items: t.Array(SearchHit) });
export type SearchResult = Static<typeof SearchResult>;
