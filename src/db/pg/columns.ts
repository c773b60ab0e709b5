// Column types the PostgreSQL schemas (src/db/pg/platform.ts, tenant.ts) need and drizzle-orm's
// pg-core does not have.
import { customType } from "drizzle-orm/pg-core";

/** bytea, read and written as a Buffer (SQLite's blob in buffer mode). */
export const bytea = customType<{ data: Buffer; driverData: Buffer }>({
  dataType: () => "bytea",
});
