// OpenID Connect ID tokens of Google and Microsoft, verified with jose against the provider's
// JWKS: signature, an algorithm allowlist (never `none` or HS*), issuer, audience = our client
// id, exp and nbf. Accounts are keyed on (provider, sub), never on the e-mail.
import { createRemoteJWKSet, customFetch, decodeJwt, errors as joseErrors, jwtVerify, type JWTPayload } from "jose";
import type { AppContext } from "../../core/context";
import type { OidcProviderConfig } from "../../config";
import { conflict, forbidden, notFound, unavailable } from "../../lib/problem";
import type { ExternalIdentity } from "./model";
import { findExternalIdentity, linkExternalIdentity, type ExternalIdentityRow } from "./service";

export const PROVIDERS = ["google", "microsoft"] as const;
export type Provider = (typeof PROVIDERS)[number];

const ALGORITHMS = ["RS256", "ES256"];
const CLOCK_TOLERANCE_SECONDS = 30;
const JWKS_TIMEOUT_MS = 5000;

export interface VerifiedIdToken {
  provider: Provider;
  subject: string;
  email: string | null;
  emailVerified: boolean;
}

export const invalidIdToken = () => forbidden("The ID token is invalid", "invalid-credentials");

export function externalIdentityView(row: ExternalIdentityRow): ExternalIdentity {
  return { id: row.id, provider: row.provider, subject: row.subject, email: row.email, user_id: row.user_id, created_at: row.created_at, updated_at: row.updated_at };
}

export class OidcVerifier {
  private jwks = new Map<Provider, ReturnType<typeof createRemoteJWKSet>>();

  constructor(private ctx: AppContext) {}

  /** The provider's configuration; 404 for an unknown provider or one without a client id. */
  provider(name: string): { name: Provider; config: OidcProviderConfig & { clientId: string } } {
    if (!(PROVIDERS as readonly string[]).includes(name)) throw notFound("Provider");
    const config = this.ctx.config.oidc[name as Provider];
    if (!config.clientId) throw notFound("Provider");
    return { name: name as Provider, config: config as OidcProviderConfig & { clientId: string } };
  }

  private keysOf(name: Provider, url: string) {
    let set = this.jwks.get(name);
    if (!set) {
      // Through the egress policy like every outbound request: the checked address is the one
      // connected to, and a refused one is the provider's keys not arriving (503).
      set = createRemoteJWKSet(new URL(url), {
        timeoutDuration: JWKS_TIMEOUT_MS,
        cooldownDuration: 30_000,
        cacheMaxAge: 600_000,
        [customFetch]: (resource, init) => this.ctx.egress.fetch(resource, { ...init, timeoutMs: JWKS_TIMEOUT_MS }),
      });
      this.jwks.set(name, set);
    }
    return set;
  }

  /** Accepted issuers: Microsoft's `{tenantid}` is the token's own `tid`; Google also omits the scheme. */
  private issuers(name: Provider, template: string, payload: JWTPayload): string[] {
    if (template.includes("{tenantid}")) {
      const tid = payload.tid;
      if (typeof tid !== "string" || !/^[0-9a-fA-F-]{1,64}$/.test(tid)) throw invalidIdToken();
      return [template.replaceAll("{tenantid}", tid)];
    }
    if (name === "google" && template.startsWith("https://")) return [template, template.slice(8)];
    return [template];
  }

  async verify(providerName: string, idToken: string): Promise<VerifiedIdToken> {
    const { name, config } = this.provider(providerName);
    let unverified: JWTPayload;
    try {
      unverified = decodeJwt(idToken);
    } catch {
      throw invalidIdToken();
    }
    const issuer = this.issuers(name, config.issuer, unverified);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, this.keysOf(name, config.jwksUrl), {
        algorithms: ALGORITHMS,
        issuer,
        audience: config.clientId,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: new Date(this.ctx.now()),
        requiredClaims: ["sub", "exp", "iat"],
      }));
    } catch (err) {
      // The key set not arriving (timeout, refused, not a JWKS, not 200) is the provider's
      // trouble, not a bad token: 503, so that clients retry instead of giving up.
      const keysUnavailable =
        !(err instanceof joseErrors.JOSEError) ||
        err instanceof joseErrors.JWKSTimeout ||
        err instanceof joseErrors.JWKSInvalid ||
        err.code === "ERR_JOSE_GENERIC";
      if (keysUnavailable) {
        this.ctx.logger.warn("OIDC key set unavailable", { provider: name, error: err instanceof Error ? err.message : String(err) });
        throw unavailable("The identity provider's keys could not be fetched", 30);
      }
      throw invalidIdToken();
    }
    if (typeof payload.sub !== "string" || payload.sub.length === 0 || payload.sub.length > 255) throw invalidIdToken();
    const email = typeof payload.email === "string" ? payload.email : typeof payload.preferred_username === "string" ? payload.preferred_username : null;
    const verified = payload.email_verified === true || payload.email_verified === "true";
    return { provider: name, subject: payload.sub, email, emailVerified: verified };
  }
}

const verifiers = new WeakMap<AppContext, OidcVerifier>();
export function oidcOf(ctx: AppContext): OidcVerifier {
  let v = verifiers.get(ctx);
  if (!v) verifiers.set(ctx, (v = new OidcVerifier(ctx)));
  return v;
}

/** The user the verified account is linked to, if any. */
export async function linkedUserId(ctx: AppContext, token: VerifiedIdToken): Promise<string | null> {
  return (await ctx.store.platform.read((db) => findExternalIdentity(db, token.provider, token.subject)))?.user_id ?? null;
}

/**
 * Links the verified account to the user (409 when it is linked to another). `changed`: false
 * when it was linked to the user already (nothing to record).
 */
export function linkIdentity(ctx: AppContext, userId: string, token: VerifiedIdToken): Promise<{ link: ExternalIdentity; changed: boolean }> {
  return ctx.store.platform.write(async (tx) => {
    const existing = await findExternalIdentity(tx, token.provider, token.subject);
    if (existing) {
      if (existing.user_id !== userId) throw conflict("That account is linked to another user");
      return { link: externalIdentityView(existing), changed: false };
    }
    return { link: externalIdentityView(await linkExternalIdentity(tx, token.provider, token.subject, token.email, userId)), changed: true };
  });
}
