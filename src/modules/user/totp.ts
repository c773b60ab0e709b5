// TOTP per RFC 6238 (SHA-1, 6 digits, 30 s steps, one step of drift either way): the secret and
// the last accepted step live on the user row, so the primitives live with their owner; the
// login's check (auth/two-factor.ts) and the enrolment (user/service.ts) both use them.
import * as OTPAuth from "otpauth";
import { forbidden } from "../../lib/problem";

export const TOTP_PERIOD = 30;
const ISSUER = "corpadmin";

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
