// What the app context needs of the storage engine, so that it can run on either (issue 19):
// SQLite files (core/store.ts's Store over db/tenants.ts's TenantDbs) or one PostgreSQL database
// (core/pg/store.ts's PgStore over PgTenants). Modules read and write through `AppStore` only; the
// lifecycle calls below are for the few places that manage corporations' storage themselves
// (creation, deletion, migrations, the open-database gauge and sweeps).
import type { PlatformDoor, TenantDoor } from "./store";

/** The doors into the databases (ctx.store). */
export interface AppStore {
  readonly platform: PlatformDoor;
  /** A corporation's door for a request. */
  tenant(corpId: string): TenantDoor;
  /** A corporation's door for one piece of background work (keeps nothing open on its account). */
  background(corpId: string): TenantDoor;
  /** A background sweep's visit to one corporation: whatever it opened is released after `fn`. */
  visit<T>(corpId: string, fn: (tenant: TenantDoor) => Promise<T> | T): Promise<T>;
}
