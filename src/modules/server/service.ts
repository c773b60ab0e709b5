// Servers: directories that hold corporation databases. The built-in one (DATA_DIR/corps) follows
// the data directory; a server holding corporations keeps its path, since their files live there.
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { count, eq, sql } from "drizzle-orm";
import type { AppContext } from "../../core/context";
import { corporations, servers } from "../../db/platform/schema";
import { writeTx } from "../../db/sqlite";
import { newId } from "../../lib/ids";
import { listRows, type ListParams } from "../../lib/list";
import { conflict, invalid, notFound } from "../../lib/problem";
import type { Server, ServerInput } from "./model";

type ServerRow = typeof servers.$inferSelect;

function corpCount(ctx: AppContext, serverId: string): number {
  return ctx.platform.select({ n: count() }).from(corporations).where(eq(corporations.server_id, serverId)).get()!.n;
}

const view = (row: ServerRow, corp_count: number): Server => ({ ...row, corp_count });

function getRow(ctx: AppContext, id: string): ServerRow {
  const row = ctx.platform.select().from(servers).where(eq(servers.id, id)).get();
  if (!row) throw notFound("Server");
  return row;
}

export function getServer(ctx: AppContext, id: string): Server {
  return view(getRow(ctx, id), corpCount(ctx, id));
}

export function listServers(ctx: AppContext, query: ListParams) {
  const counts = new Map(
    ctx.platform
      .select({ id: corporations.server_id, n: count() })
      .from(corporations)
      .groupBy(corporations.server_id)
      .all()
      .map((r) => [r.id, r.n]),
  );
  return listRows(ctx.platform, servers, { q: [servers.name, servers.path] }, query, (r: ServerRow) => view(r, counts.get(r.id) ?? 0));
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

function checkUnique(ctx: AppContext, name: string, path: string, exceptId?: string): void {
  const byName = ctx.platform.select({ id: servers.id }).from(servers).where(eq(servers.name, name)).get();
  if (byName && byName.id !== exceptId) throw conflict(`A server named '${name}' exists`);
  const byPath = ctx.platform.select({ id: servers.id }).from(servers).where(eq(servers.path, path)).get();
  if (byPath && byPath.id !== exceptId) throw conflict(`Another server uses the path '${path}'`);
}

export function createServer(ctx: AppContext, input: ServerInput): Server {
  if (!isAbsolute(input.path)) throw invalid("path", "must be an absolute path");
  checkUnique(ctx, input.name, resolve(input.path));
  const path = usableDirectory(input.path);
  const id = newId();
  writeTx(ctx.platform, (tx) => {
    tx.insert(servers).values({ id, name: input.name, path, description: input.description ?? null }).run();
  });
  return getServer(ctx, id);
}

export function updateServer(ctx: AppContext, id: string, input: ServerInput): Server {
  const current = getRow(ctx, id);
  if (!isAbsolute(input.path)) throw invalid("path", "must be an absolute path");
  const wanted = resolve(input.path);
  checkUnique(ctx, input.name, wanted, id);
  if (wanted !== current.path) {
    if (current.builtin) throw conflict("The built-in server's path follows the data directory and cannot change");
    if (corpCount(ctx, id) > 0) throw conflict("The server holds corporations; their databases live at its path");
  }
  const path = wanted === current.path ? wanted : usableDirectory(input.path);
  writeTx(ctx.platform, (tx) => {
    tx.update(servers).set({ name: input.name, path, description: input.description ?? null }).where(eq(servers.id, id)).run();
  });
  return getServer(ctx, id);
}

/** Removes the record only; the directory and anything in it stay on disk. */
export function deleteServer(ctx: AppContext, id: string): void {
  const current = getRow(ctx, id);
  if (current.builtin) throw conflict("The built-in server cannot be deleted");
  writeTx(ctx.platform, (tx) => {
    const held = tx.select({ n: count() }).from(corporations).where(eq(corporations.server_id, id)).get()!.n;
    if (held > 0) throw conflict("The server holds corporations");
    tx.delete(servers).where(sql`${servers.id} = ${id}`).run();
  });
}
