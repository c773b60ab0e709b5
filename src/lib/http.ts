// Small HTTP helpers shared by the modules.
import type { Context } from "elysia";
import { jsonTextResponse } from "./compression";

/** Creates answer 200 with the resource and `Location: /api/<resource>/{id}` (routes.md, "Success"). */
export function created<T extends { id: string }>(set: Context["set"], collectionPath: string, resource: T): T {
  set.headers.location = `${collectionPath}/${resource.id}`;
  return resource;
}

/** A DELETE's 204. */
export function noContent(set: Context["set"]): void {
  set.status = 204;
}

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * A 200 JSON answer that skips Elysia's response check for the route. Checking and normalising a
 * large response schema (the Contract: three parties with addresses, ≈ 2 KB) costs more than
 * building the value, so a hot read whose value is assembled field by field from the schema's own
 * type returns this instead. The route still declares `response` (the OpenAPI document and the
 * handler's types keep it), and its tests check the bodies against the schema. The bytes and
 * headers are those Elysia sends for an object: the headers set so far (the request id) move into
 * the Response, because Elysia would otherwise merge them by copying the body into a new Response
 * as a stream, which costs more than the check saved.
 */
export function checkedJson<T>(set: Context["set"], value: T): Response {
  return checkedJsonText(set, JSON.stringify(value));
}

/** checkedJson for a value already serialised. */
export function checkedJsonText(set: Context["set"], json: string): Response {
  const headers = set.headers as Record<string, string>;
  headers["content-type"] = "application/json;charset=utf-8";
  set.headers = {};
  return jsonTextResponse(json, headers);
}
