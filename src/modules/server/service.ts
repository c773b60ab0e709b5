// Servers: directories that hold corporation databases. The built-in one (DATA_DIR/corps) follows
// the data directory; a server holding corporations keeps its path, since their files live there.
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { eq } from "drizzle-orm";
import type { AppContext, ServerCorpCounts } from "../../core/context";
import { servers } from "../../db/platform/schema";
import type { PlatformDb } from "../../db/sqlite";
import { newId } from "../../lib/ids";
import { listRows, type ListParams } from "../../db/list";
import { conflict, invalid, notFound } from "../../lib/problem";
import type { Server, ServerInput } from "./model";

type ServerRow = typeof servers.$inferSelect;

const view = (row: ServerRow, corp_count: number): Server => ({ ...row, corp_count });

/** Whether a server exists (a new corporation names its server). */
export async function serverExists(db: PlatformDb, id: string): Promise<boolean> {
  return !!(await db.select({ id: servers.id }).from(servers).where(eq(servers.id, id)).get());
}

/** Every server's directory, by id (backups and metrics find the corporation files with it). */
export async function serverDirs(db: PlatformDb): Promise<Map<string, { path: string; builtin: boolean }>> {
  const rows = await db.select({ id: servers.id, path: servers.path, builtin: servers.builtin }).from(servers).all();
  return new Map(rows.map((r) => [r.id, { path: r.path, builtin: r.builtin }]));
}

/** The built-in server's id, or null in a platform database without one (a damaged restore). */
export async function builtinServerIdOf(db: PlatformDb): Promise<string | null> {
  return (await db.select({ id: servers.id }).from(servers).where(eq(servers.builtin, true)).get())?.id ?? null;
}

async function getRow(db: PlatformDb, id: string): Promise<ServerRow> {
  const row = await db.select().from(servers).where(eq(servers.id, id)).get();
  if (!row) throw notFound("Server");
  return row;
}

/** The corporation module's counts (ctx.serverCorps), set when it is mounted. */
function corpCounts(ctx: AppContext): ServerCorpCounts {
  if (!ctx.serverCorps) throw new Error("the corporation module is not mounted: servers cannot tell what they hold");
  return ctx.serverCorps;
}

const serverView = async (ctx: AppContext, db: PlatformDb, id: string): Promise<Server> => view(await getRow(db, id), await corpCounts(ctx).on(db, id));

export function getServer(ctx: AppContext, id: string): Promise<Server> {
  return ctx.store.platform.read((db) => serverView(ctx, db, id));
}

export function listServers(ctx: AppContext, query: ListParams) {
  return ctx.store.platform.read(async (db) => {
    const counts = await corpCounts(ctx).byServer(db);
    return listRows(db, servers, { q: [servers.name, servers.path] }, query, (r: ServerRow) => view(r, counts.get(r.id) ?? 0));
  });
}

/**
 * An absolute path, normalised (no trailing slash, no `..`), made to exist and proven writable by
 * writing and removing a probe file (mode bits alone say nothing to root or on read-only mounts).
 */
function usableDirectory(raw: string): string {
  if (!isAbsolute(raw)) throw invalid("path", "must be an absolute path");
  const path = resolve(raw);
  try {
    mkdirSync(path, { recursive: true });
    if (!statSync(path).isDirectory()) throw new Error("not a directory");
    const probe = join(path, `.corpadmin-probe-${newId()}`);
    writeFileSync(probe, "");
    rmSync(probe, { force: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw invalid("path", `is not a writable directory${code ? ` (${code})` : ""}`);
  }
  return path;
}

async function checkUnique(db: PlatformDb, name: string, path: string, exceptId?: string): Promise<void> {
  const byName = await db.select({ id: servers.id }).from(servers).where(eq(servers.name, name)).get();
  if (byName && byName.id !== exceptId) throw conflict(`A server named '${name}' exists`);
  const byPath = await db.select({ id: servers.id }).from(servers).where(eq(servers.path, path)).get();
  if (byPath && byPath.id !== exceptId) throw conflict(`Another server uses the path '${path}'`);
}

export async function createServer(ctx: AppContext, input: ServerInput): Promise<Server> {
  if (!isAbsolute(input.path)) throw invalid("path", "must be an absolute path");
  // Checked before the directory is made (a clash creates nothing), and again in the write.
  await ctx.store.platform.read((db) => checkUnique(db, input.name, resolve(input.path)));
  const path = usableDirectory(input.path);
  const id = newId();
  return ctx.store.platform.write(async (tx, w) => {
    await checkUnique(tx, input.name, path);
    await tx.insert(servers).values({ id, name: input.name, path, description: input.description ?? null }).run();
    w.record({ type: "server", id, action: "create", before: null, after: await getRow(tx, id) });
    return serverView(ctx, tx, id);
  });
}

export async function updateServer(ctx: AppContext, id: string, input: ServerInput): Promise<Server> {
  const wanted = resolve(input.path);
  const changesPath = await ctx.store.platform.read(async (db) => {
    const current = await getRow(db, id);
    if (!isAbsolute(input.path)) throw invalid("path", "must be an absolute path");
    await checkUnique(db, input.name, wanted, id);
    if (wanted === current.path) return false;
    if (current.builtin) throw conflict("The built-in server's path follows the data directory and cannot change");
    if ((await corpCounts(ctx).on(db, id)) > 0) throw conflict("The server holds corporations; their databases live at its path");
    return true;
  });
  const path = changesPath ? usableDirectory(input.path) : wanted;
  return ctx.store.platform.write(async (tx, w) => {
    const current = await getRow(tx, id);
    await checkUnique(tx, input.name, path, id);
    // What was checked before the directory was made must still hold.
    if (path !== current.path && (current.builtin || (await corpCounts(ctx).on(tx, id)) > 0)) {
      throw conflict("The server holds corporations; their databases live at its path");
    }
    await tx.update(servers).set({ name: input.name, path, description: input.description ?? null }).where(eq(servers.id, id)).run();
    w.record({ type: "server", id, action: "update", before: current, after: await getRow(tx, id) });
    return serverView(ctx, tx, id);
  });
}

/** Removes the record only; the directory and anything in it stay on disk. */
export function deleteServer(ctx: AppContext, id: string): Promise<void> {
  return ctx.store.platform.write(async (tx, w) => {
    const current = await getRow(tx, id);
    if (current.builtin) throw conflict("The built-in server cannot be deleted");
    if ((await corpCounts(ctx).on(tx, id)) > 0) throw conflict("The server holds corporations");
    await tx.delete(servers).where(eq(servers.id, id)).run();
    w.record({ type: "server", id, action: "delete", before: current, after: null });
  });
}
