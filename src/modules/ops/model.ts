import { t, type Static } from "elysia";
import { Int } from "../../lib/schemas";

export const Backup = t.Object({
  name: t.String({ description: "corpadmin-YYYYMMDDTHHMMSSZ (scheduled: with milliseconds, corpadmin-YYYYMMDDTHHMMSS.sssZ)" }),
  created_at: t.String(),
  size_bytes: Int(),
  corporations: Int(),
  scheduled: t.Boolean({ description: "made by --backup-cron (pruned to --backup-keep); false: made through the API" }),
  verified: t.Boolean({ description: "integrity_check passed on every database when it was taken, and every file is there with its recorded size" }),
});
export type Backup = Static<typeof Backup>;

export const BackupNameParams = t.Object({ name: t.String({ maxLength: 64 }) });
