// The OpenAPI document generated at build time (scripts/openapi-document.ts; build.ts defines the
// constant). Null when running from source, where the openapi plugin generates it on request.
declare const CORPADMIN_OPENAPI_DOCUMENT: string | undefined;

export const embeddedOpenApi: string | null = typeof CORPADMIN_OPENAPI_DOCUMENT === "string" ? CORPADMIN_OPENAPI_DOCUMENT : null;
