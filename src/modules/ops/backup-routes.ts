// Backups through the API (routes.md, Operator additions), for `*` only: list the backups of
// --backup-dir (scheduled ones included), take one now (the same consistent copy as
// `corpadmin backup`, then verified; in cluster mode a pg_dump archive), download one as a
// streamed tar.gz, delete one.
// Restore stays a CLI command: it needs the service stopped (README, "Restore").
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { noContent } from "../../lib/http";
import { ArrayOf } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import type { BackupLock } from "./backup";
import { backupArchive, deleteBackupFor, listBackups, takeBackupFor } from "./backup-service";
import { Backup, BackupNameParams } from "./model";

export function backupRoutes(ctx: AppContext, lock: BackupLock) {
  const { backupDir } = ctx.config;
  return new Elysia({ name: "backup", prefix: "/api", tags: ["Backup"] })
    .use(authGuard(ctx))
    .get("/backup", () => ({ items: listBackups(backupDir) }), {
      auth: "*",
      response: { 200: ArrayOf(Backup) },
      detail: { summary: "List backups, newest first (scheduled ones included)" },
    })
    .post(
      "/backup",
      ({ principal }) => takeBackupFor(ctx, lock, principal),
      {
        auth: "*",
        response: { 200: Backup },
        detail: { summary: "Take a backup now (consistent, as `corpadmin backup`; verified); 409 while one is running" },
      },
    )
    .get(
      "/backup/:name/download",
      ({ params }) => {
        const body = backupArchive(backupDir, params.name).pipeThrough(new CompressionStream("gzip"));
        return new Response(body, {
          headers: {
            "content-type": "application/gzip",
            "content-disposition": `attachment; filename="${params.name}.tar.gz"`,
            "cache-control": "no-store",
          },
        });
      },
      {
        auth: "*",
        params: BackupNameParams,
        detail: {
          summary: "Download a backup as one tar.gz (its directory's files at the top level), streamed",
          responses: { 200: { description: "tar.gz", content: { "application/gzip": { schema: { type: "string", format: "binary" } } } } },
        },
      },
    )
    .delete(
      "/backup/:name",
      async ({ params, principal, set }) => {
        await deleteBackupFor(ctx, principal, params.name);
        noContent(set);
      },
      { auth: "*", params: BackupNameParams, detail: { summary: "Delete a backup" } },
    );
}
