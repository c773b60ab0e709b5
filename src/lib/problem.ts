// Domain errors. Handlers throw these; the one error handler in app.ts turns them (and Elysia's
// own validation/parse errors) into RFC 9457 application/problem+json documents.

export interface FieldError {
  path: string;
  message: string;
}

export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly slug: string,
    readonly title: string,
    detail?: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail ?? title);
  }

  get type(): string {
    return `urn:corpadmin:problem:${this.slug}`;
  }

  toBody(): Record<string, unknown> {
    const body: Record<string, unknown> = {
      type: this.type,
      title: this.title,
      status: this.status,
      detail: this.message,
    };
    if (this.errors?.length) body.errors = this.errors;
    return body;
  }
}

/** 400 naming one or more fields (dotted paths: `customer.address.city.name`). */
export function invalid(path: string, message: string, more: FieldError[] = []): Problem {
  const errors = [{ path, message }, ...more];
  return new Problem(400, "validation", "Invalid request", `${path}: ${message}`, errors);
}

export function invalidMany(errors: FieldError[]): Problem {
  return new Problem(400, "validation", "Invalid request", errors.map((e) => `${e.path}: ${e.message}`).join("; "), errors);
}

export const unauthorized = (detail = "A valid bearer token is required") =>
  new Problem(401, "unauthorized", "Unauthorized", detail);

/** 403; `slug` names a specific cause (`corp-blocked`, `invalid-credentials`, ...). */
export const forbidden = (detail = "Not allowed", slug = "forbidden") =>
  new Problem(403, slug, "Forbidden", detail);

export const notFound = (what = "Resource") => new Problem(404, "not-found", "Not found", `${what} not found`);

/** 405: the path exists, under other methods (listed in `Allow`). */
export const methodNotAllowed = (method: string, allow: string[]) =>
  new Problem(405, "method-not-allowed", "Method not allowed", `${method} is not allowed here; allowed: ${allow.join(", ")}`, undefined, { allow: allow.join(", ") });

export const conflict = (detail: string) => new Problem(409, "conflict", "Conflict", detail);

export const gone = (detail: string) => new Problem(410, "gone", "Gone", detail);

export const rateLimited = (retryAfterSeconds: number, detail = "Too many requests") =>
  new Problem(429, "rate-limited", "Too many requests", detail, undefined, {
    "retry-after": String(Math.max(1, Math.ceil(retryAfterSeconds))),
  });

export const unavailable = (detail: string, retryAfterSeconds = 60) =>
  new Problem(503, "unavailable", "Service unavailable", detail, undefined, {
    "retry-after": String(retryAfterSeconds),
  });

export const payloadTooLarge = (limit: number) =>
  new Problem(413, "payload-too-large", "Payload too large", `The request body exceeds ${limit} bytes`);

export const unsupportedMediaType = () =>
  new Problem(415, "unsupported-media-type", "Unsupported media type", "The request body must be application/json");

export const internal = () => new Problem(500, "internal", "Internal error", "An unexpected error occurred");

export function problemResponse(p: Problem): Response {
  return new Response(JSON.stringify(p.toBody()), {
    status: p.status,
    headers: { "content-type": "application/problem+json", ...(p.headers ?? {}) },
  });
}
