// Who a request acts as, established by the auth guard (src/http/guard.ts) and handed to
// handlers and services.
import type { CorpRow } from "./corp-cache";
import type { PermissionSets } from "./permissions";
import type { TenantDoor } from "./store";

export interface Principal {
  kind: "user" | "key";
  userId: string | null;
  sessionId: string | null;
  corpId: string;
  corp: CorpRow;
  superAdmin: boolean;
  permission: PermissionSets;
  /** The external application whose key authenticated the request. */
  externalAppId: string | null;
  ip: string;
  /** The request's x-request-id, for audit entries. */
  requestId: string | null;
}

export interface ApiKeyCheck {
  appId: string;
  /** The actor of the app's changes in the history. */
  name: string;
  active: boolean;
}

/** Filled by the externalapp module: checks `<app id>.<secret>` against a corporation's database. */
export type ApiKeyVerifier = (tenant: TenantDoor, appId: string, secret: string) => Promise<ApiKeyCheck | null>;

