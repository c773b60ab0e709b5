// The notepad (routes.md, Core: Notepad): notes private to their author in the working corporation.
import { and, eq } from "drizzle-orm";
import type { TenantDb } from "../../db/sqlite";
import type { TenantDoor } from "../../core/store";
import { notes } from "../../db/tenant/schema";
import { newId } from "../../lib/ids";
import { listRows, type ListParams } from "../../db/list";
import { invalid, notFound } from "../../lib/problem";
import { NOTE_CONTENT_MAX_BYTES, type Note, type NoteInput } from "./model";

const noteView = (row: typeof notes.$inferSelect): Note => ({
  id: row.id,
  title: row.title,
  content: row.content,
  user_id: row.user_id,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/** Another user's note is simply not there for the caller. */
async function noteOf(db: TenantDb, userId: string, id: string): Promise<Note> {
  const row = await db.select().from(notes).where(and(eq(notes.id, id), eq(notes.user_id, userId))).get();
  if (!row) throw notFound("Note");
  return noteView(row);
}

export function createNote(tenant: TenantDoor, userId: string, input: NoteInput): Promise<Note> {
  if (Buffer.byteLength(input.content, "utf8") > NOTE_CONTENT_MAX_BYTES) throw invalid("content", "exceeds 64 KiB");
  const id = newId();
  return tenant.write(async (tx) => {
    await tx.insert(notes).values({ id, user_id: userId, title: input.title ?? null, content: input.content }).run();
    return noteOf(tx, userId, id);
  });
}

export function getNote(tenant: TenantDoor, userId: string, id: string): Promise<Note> {
  return tenant.read((db) => noteOf(db, userId, id));
}

export function listNotes(tenant: TenantDoor, userId: string, query: ListParams) {
  return tenant.read((db) => listRows(db, notes, { q: [notes.title, notes.content] }, query, noteView, [eq(notes.user_id, userId)]));
}

