// Small HTTP helpers shared by the modules.
import type { Context } from "elysia";

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
