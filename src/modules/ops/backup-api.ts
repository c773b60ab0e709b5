// Backups through the API (routes.md, Operator additions), for `*` only: list the backups of
// --backup-dir (scheduled ones included), take one now (the same consistent copy as
// `corpadmin backup`, then verified), download one as a streamed tar.gz, delete one.
// Restore stays a CLI command: it needs the service stopped (README, "Restore").
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { Elysia, t, type Static } from "elysia";
import type { AppContext } from "../../core/context";
import { noContent } from "../../lib/http";
import { conflict, notFound, Problem } from "../../lib/problem";
import { ArrayOf } from "../../lib/schemas";
import { tarStream, type TarEntry } from "../../lib/tar";
import { authGuard } from "../auth/guard";
import { BackupError, BackupLock, createBackup, fsyncPath, MANIFEST, verifyBackup, type Manifest } from "./backup";

export const Backup = t.Object({
  name: t.String({ description: "corpadmin-YYYYMMDDTHHMMSSZ (scheduled: with milliseconds, corpadmin-YYYYMMDDTHHMMSS.sssZ)" }),
  created_at: t.String(),
  size_bytes: t.Integer(),
  corporations: t.Integer(),
  scheduled: t.Boolean({ description: "made by --backup-cron (pruned to --backup-keep); false: made through the API" }),
  verified: t.Boolean({ description: "integrity_check passed on every database when it was taken, and every file is there with its recorded size" }),
});
export type Backup = Static<typeof Backup>;

/** Backups made through the API; scheduled ones carry milliseconds (ops/backup.ts). */
const API_NAME = /^corpadmin-\d{8}T\d{6}Z$/;
const SCHEDULED_NAME = /^corpadmin-\d{8}T\d{6}\.\d{3}Z$/;
const isBackupName = (name: string) => API_NAME.test(name) || SCHEDULED_NAME.test(name);

export const apiBackupName = (at: number) => `corpadmin-${new Date(at).toISOString().replace(/[-:]/g, "").replace(/\.\d{3}Z$/, "Z")}`;

function readManifest(dir: string): Manifest | null {
  try {
    const m = JSON.parse(readFileSync(join(dir, MANIFEST), "utf8")) as Manifest;
    return Array.isArray(m?.files) ? m : null;
  } catch {
    return null;
  }
}

function describe(backupDir: string, name: string): Backup | null {
  const dir = join(backupDir, name);
  const manifest = readManifest(dir);
  // A directory without a manifest is not a backup (an interrupted run).
  if (!manifest) return null;
  let complete = true;
  for (const f of manifest.files) {
    // statSync without throwing: the schedule may be pruning this very backup.
    const size = statSync(join(dir, String(f.path)), { throwIfNoEntry: false })?.size;
    if (size !== f.size) complete = false;
  }
  return {
    name,
    created_at: manifest.created_at,
    size_bytes: manifest.files.reduce((n, f) => n + (Number(f.size) || 0), 0),
    corporations: manifest.files.filter((f) => f.kind === "corporation").length,
    scheduled: SCHEDULED_NAME.test(name),
    verified: complete,
  };
}

export function listBackups(backupDir: string): Backup[] {
  if (!existsSync(backupDir)) return [];
  const out: Backup[] = [];
  for (const name of readdirSync(backupDir)) {
    if (!isBackupName(name)) continue;
    const b = describe(backupDir, name);
    if (b) out.push(b);
  }
  return out.sort((a, b) => (a.created_at === b.created_at ? b.name.localeCompare(a.name) : b.created_at.localeCompare(a.created_at)));
}

/** The directory of a complete backup named `name`; 404 for any other name (no path ever leaves backupDir). */
function backupPath(backupDir: string, name: string): string {
  if (!isBackupName(name)) throw notFound("Backup");
  const dir = join(backupDir, name);
  if (!existsSync(join(dir, MANIFEST))) throw notFound("Backup");
  return dir;
}

/** Takes a backup now into `<name>.partial`, verifies it, renames it. */
export async function createApiBackup(dataDir: string, backupDir: string, at: number, ctx: Pick<AppContext, "logger">): Promise<Backup> {
  const name = apiBackupName(at);
  const dir = join(backupDir, name);
  if (existsSync(dir)) throw conflict(`A backup named ${name} exists already: try again in a second`);
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  try {
    await createBackup(dataDir, partial, ctx.logger);
    // The whole check: every file against its size and SHA-256, and integrity_check again.
    await verifyBackup(partial);
    renameSync(partial, dir);
    fsyncPath(backupDir);
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
  ctx.logger.info("backup done", { dir, via: "api" });
  return describe(backupDir, name)!;
}

/** The files of a backup as archive entries: what its directory holds, manifest first. */
function entriesOf(dir: string): TarEntry[] {
  const entries: TarEntry[] = [{ name: MANIFEST, path: join(dir, MANIFEST) }];
  const walk = (rel: string) => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const name = rel ? `${rel}/${e.name}` : e.name;
      if (name === MANIFEST) continue;
      if (e.isDirectory()) {
        entries.push({ name: `${name}/` });
        walk(name);
      } else if (e.isFile()) entries.push({ name, path: join(dir, name) });
    }
  };
  walk("");
  return entries;
}

const NameParams = t.Object({ name: t.String({ maxLength: 64 }) });

export function backupRoutes(ctx: AppContext, lock: BackupLock) {
  const { dataDir, backupDir } = ctx.config;
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
        const run = lock.tryRun(() => createApiBackup(dataDir, backupDir, ctx.now(), ctx));
        if (!run) throw conflict("A backup is running: try again when it has finished");
        try {
          const backup = await run;
          ctx.audit.record({ action: "backup.create", outcome: "success", actor_user_id: principal.userId, target: backup.name, ip: principal.ip, request_id: principal.requestId });
          return backup;
        } catch (err) {
          ctx.audit.record({ action: "backup.create", outcome: "failure", actor_user_id: principal.userId, ip: principal.ip, request_id: principal.requestId, reason: err instanceof BackupError ? "backup-failed" : "error" });
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
        const dir = backupPath(backupDir, params.name);
        let tar: ReadableStream<Uint8Array>;
        try {
          tar = tarStream(entriesOf(dir));
        } catch (err) {
          // Deleted or pruned between the check and the opening of its files.
          if ((err as NodeJS.ErrnoException).code === "ENOENT") throw notFound("Backup");
          throw err;
        }
        const body = tar.pipeThrough(new CompressionStream("gzip"));
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
        params: NameParams,
        detail: {
          summary: "Download a backup as one tar.gz (its directory's files at the top level), streamed",
          responses: { 200: { description: "tar.gz", content: { "application/gzip": { schema: { type: "string", format: "binary" } } } } },
        },
      },
    )
    .delete(
      "/backup/:name",
      ({ params, principal, set }) => {
        const dir = backupPath(backupDir, params.name);
        rmSync(dir, { recursive: true, force: true });
        ctx.audit.record({ action: "backup.delete", outcome: "success", actor_user_id: principal.userId, target: params.name, ip: principal.ip, request_id: principal.requestId });
        noContent(set);
      },
      { auth: "*", params: NameParams, detail: { summary: "Delete a backup" } },
    );
}
