// Backups through the API (routes.md, Operator additions), for `*` only: list the backups of
// --backup-dir (scheduled ones included), take one now (the same consistent copy as
// `corpadmin backup`, then verified; in cluster mode a pg_dump archive), download one as a
// streamed tar.gz, delete one.
// Restore stays a CLI command: it needs the service stopped (README, "Restore").
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { noContent } from "../../lib/http";
import { conflict, Problem } from "../../lib/problem";
import { ArrayOf } from "../../lib/schemas";
import { authGuard } from "../../http/guard";
import { BackupError, BackupUnavailable, type BackupLock } from "./backup";
import { backupArchive, createApiBackup, deleteBackup, listBackups } from "./backup-service";
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
      async ({ principal }) => {
        const run = lock.tryRun(() => createApiBackup(ctx, ctx.now()));
        if (!run) throw conflict("A backup is running: try again when it has finished");
        try {
          const backup = await run;
          await ctx.audit.record({ action: "backup.create", outcome: "success", actor_user_id: principal.userId, target: backup.name, ip: principal.ip, request_id: principal.requestId });
          return backup;
        } catch (err) {
          const reason = err instanceof BackupUnavailable ? "backup-unavailable" : err instanceof BackupError ? "backup-failed" : "error";
          await ctx.audit.record({ action: "backup.create", outcome: "failure", actor_user_id: principal.userId, ip: principal.ip, request_id: principal.requestId, reason });
          // Cluster mode without pg_dump, or with a role that cannot read every row: the operator's to set up.
          if (err instanceof BackupUnavailable) throw conflict(`This node cannot take a backup: ${err.message}`);
          // Not the client's doing: a 500 that says why (disk full, a database that fails its check).
          if (err instanceof BackupError) throw new Problem(500, "internal", "Internal error", `The backup failed: ${err.message}`);
          throw err;
        }
      },
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
        deleteBackup(backupDir, params.name);
        await ctx.audit.record({ action: "backup.delete", outcome: "success", actor_user_id: principal.userId, target: params.name, ip: principal.ip, request_id: principal.requestId });
        noContent(set);
      },
      { auth: "*", params: BackupNameParams, detail: { summary: "Delete a backup" } },
    );
}
