// Two-factor authentication (routes.md, "2FA"): TOTP per RFC 6238 (SHA-1, 6 digits, 30 s steps,
// one step of drift either way). Each code is accepted once: the last accepted time step is kept
// on the user row and moved forward by a conditional UPDATE, so two requests racing with the same
// code cannot both win. Remembered devices skip the code; only a hash of the cookie is stored.
import { randomBytes } from "node:crypto";
import type { Cookie } from "elysia";
import type { AppContext } from "../../core/context";
import { sha256Hex } from "../../lib/ids";
import { forbidden } from "../../lib/problem";
import { toIso } from "../../lib/time";
import { consumeTotpStep } from "../user/service";
import { matchingStep, twoFactorInvalid } from "../user/totp";
import type { UserRow } from "../user/view";
import { deviceRemembered, insertRememberedDevice } from "./service";

export const DEVICE_COOKIE = "corpadmin_device";
export const DEVICE_MAX_AGE = 2_592_000;

export const twoFactorRequired = () => forbidden("A two-factor code is required", "two-factor-required");

/** Accepts the code once: true when it matches and its step is newer than the last accepted. */
async function consumeCode(ctx: AppContext, userId: string, secret: string, code: number | string): Promise<boolean> {
  const step = matchingStep(secret, code, ctx.now());
  if (step === null) return false;
  return ctx.store.platform.write((tx) => consumeTotpStep(tx, userId, step));
}

/** Remembers the device for 30 days; returns the cookie value (only its hash is stored). */
async function rememberDevice(ctx: AppContext, userId: string): Promise<string> {
  const value = randomBytes(32).toString("base64url");
  const now = ctx.now();
  await ctx.store.platform.write((tx) => insertRememberedDevice(tx, userId, sha256Hex(value), toIso(now + DEVICE_MAX_AGE * 1000), toIso(now)));
  return value;
}

async function isRemembered(ctx: AppContext, userId: string, value: unknown): Promise<boolean> {
  // Elysia turns cookie values that look like JSON or numbers into those; ours are plain text.
  if (typeof value !== "string" || value.length === 0 || value.length > 200) return false;
  const hash = sha256Hex(value);
  const now = toIso(ctx.now());
  return ctx.store.platform.read((db) => deviceRemembered(db, userId, hash, now));
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
export async function checkTwoFactor(ctx: AppContext, user: UserRow, input: TwoFactorInput, onFailure: () => Promise<void>): Promise<string | null> {
  if (!user.two_factor_secret) return null;
  if (await isRemembered(ctx, user.id, input.deviceCookie)) return null;
  if (input.code === undefined || input.code === null) throw twoFactorRequired();
  if (!(await consumeCode(ctx, user.id, user.two_factor_secret, input.code))) {
    await onFailure();
    throw twoFactorInvalid();
  }
  return input.remember ? rememberDevice(ctx, user.id) : null;
}

/** Sets `corpadmin_device` as routes.md says: HttpOnly, SameSite=Strict, Path=/api, 30 days. */
export function setDeviceCookie(ctx: AppContext, cookie: Record<string, Cookie<unknown>>, request: Request, value: string): void {
  const secure = new URL(request.url).protocol === "https:" || ctx.config.publicUrl.startsWith("https:");
  cookie[DEVICE_COOKIE].set({ value, httpOnly: true, sameSite: "strict", secure, path: "/api", maxAge: DEVICE_MAX_AGE });
}
