// Two-factor authentication (routes.md, "2FA"): TOTP per RFC 6238 (SHA-1, 6 digits, 30 s steps,
// one step of drift either way). Each code is accepted once: the last accepted time step is kept
// on the user row and moved forward by a conditional UPDATE, so two requests racing with the same
// code cannot both win. Remembered devices skip the code; only a hash of the cookie is stored.
import { randomBytes } from "node:crypto";
import { and, eq, gt, lt } from "drizzle-orm";
import * as OTPAuth from "otpauth";
import type { Cookie } from "elysia";
import type { AppContext } from "../../core/context";
import { rememberedDevices } from "../../db/platform/schema";
import { sha256Hex } from "../../lib/ids";
import { forbidden } from "../../lib/problem";
import { toIso } from "../../lib/time";
import type { UserRow } from "../user/view";

export const TOTP_PERIOD = 30;
export const DEVICE_COOKIE = "corpadmin_device";
export const DEVICE_MAX_AGE = 2_592_000;
const ISSUER = "corpadmin";

export const twoFactorRequired = () => forbidden("A two-factor code is required", "two-factor-required");
export const twoFactorInvalid = () => forbidden("The two-factor code is invalid", "two-factor-invalid");

/** An integer code is left-padded to 6 digits; a 6-digit string is taken as is. */
export function normalizeCode(code: number | string): string {
  return typeof code === "number" ? String(code).padStart(6, "0") : code;
}

export function newTotpSecret(): string {
  return new OTPAuth.Secret({ size: 20 }).base32;
}

function totp(secret: string, label = "user"): OTPAuth.TOTP {
  return new OTPAuth.TOTP({ issuer: ISSUER, label, algorithm: "SHA1", digits: 6, period: TOTP_PERIOD, secret: OTPAuth.Secret.fromBase32(secret) });
}

export function otpauthUri(secret: string, login: string): string {
  return totp(secret, login).toString();
}

/** The time step the code belongs to (within one step of now), or null when it matches none. */
export function matchingStep(secret: string, code: number | string, nowMs: number): number | null {
  const delta = totp(secret).validate({ token: normalizeCode(code), timestamp: nowMs, window: 1 });
  return delta === null ? null : Math.floor(nowMs / 1000 / TOTP_PERIOD) + delta;
}

/** Accepts the code once: true when it matches and its step is newer than the last accepted. */
export function consumeCode(ctx: AppContext, userId: string, secret: string, code: number | string): boolean {
  const step = matchingStep(secret, code, ctx.now());
  if (step === null) return false;
  const res = ctx.platform.$client
    .query("UPDATE users SET two_factor_last_step = ?2 WHERE id = ?1 AND (two_factor_last_step IS NULL OR two_factor_last_step < ?2)")
    .run(userId, step);
  return res.changes === 1;
}

/** Remembers the device for 30 days; returns the cookie value (only its hash is stored). */
export function rememberDevice(ctx: AppContext, userId: string): string {
  const value = randomBytes(32).toString("base64url");
  ctx.platform.delete(rememberedDevices).where(lt(rememberedDevices.expires_at, toIso(ctx.now()))).run();
  ctx.platform
    .insert(rememberedDevices)
    .values({ user_id: userId, token_hash: sha256Hex(value), expires_at: toIso(ctx.now() + DEVICE_MAX_AGE * 1000) })
    .run();
  return value;
}

export function deviceRemembered(ctx: AppContext, userId: string, value: unknown): boolean {
  // Elysia turns cookie values that look like JSON or numbers into those; ours are plain text.
  if (typeof value !== "string" || value.length === 0 || value.length > 200) return false;
  const row = ctx.platform
    .select({ id: rememberedDevices.id })
    .from(rememberedDevices)
    .where(and(eq(rememberedDevices.token_hash, sha256Hex(value)), eq(rememberedDevices.user_id, userId), gt(rememberedDevices.expires_at, toIso(ctx.now()))))
    .get();
  return !!row;
}

export function forgetDevices(ctx: AppContext, userId: string): void {
  ctx.platform.delete(rememberedDevices).where(eq(rememberedDevices.user_id, userId)).run();
}

export interface TwoFactorInput {
  code?: number | string | null;
  remember?: boolean | null;
  deviceCookie?: unknown;
}

/**
 * The login's last check. Returns a new device cookie value when the device is to be remembered.
 * `onFailure` counts a wrong code towards the lock (a missing code is not a failure).
 */
export function checkTwoFactor(ctx: AppContext, user: UserRow, input: TwoFactorInput, onFailure: () => void): string | null {
  if (!user.two_factor_secret) return null;
  if (deviceRemembered(ctx, user.id, input.deviceCookie)) return null;
  if (input.code === undefined || input.code === null) throw twoFactorRequired();
  if (!consumeCode(ctx, user.id, user.two_factor_secret, input.code)) {
    onFailure();
    throw twoFactorInvalid();
  }
  return input.remember ? rememberDevice(ctx, user.id) : null;
}

/** Sets `corpadmin_device` as routes.md says: HttpOnly, SameSite=Strict, Path=/api, 30 days. */
export function setDeviceCookie(ctx: AppContext, cookie: Record<string, Cookie<unknown>>, request: Request, value: string): void {
  const secure = new URL(request.url).protocol === "https:" || ctx.config.publicUrl.startsWith("https:");
  cookie[DEVICE_COOKIE].set({ value, httpOnly: true, sameSite: "strict", secure, path: "/api", maxAge: DEVICE_MAX_AGE });
}
