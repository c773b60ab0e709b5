import { t, type Static } from "elysia";
import { Opt, Uuid } from "../../lib/schemas";

export const NOTE_CONTENT_MAX_BYTES = 64 * 1024;

export const Note = t.Object({
  id: Uuid,
  title: t.Union([t.String(), t.Null()]),
  content: t.String(),
  user_id: Uuid,
  created_at: t.String(),
  updated_at: t.String(),
});
export type Note = Static<typeof Note>;

export const NoteInput = t.Object({
  title: Opt(t.String({ maxLength: 200 })),
  content: t.String({ maxLength: NOTE_CONTENT_MAX_BYTES, description: "at most 64 KiB of UTF-8" }),
});
export type NoteInput = Static<typeof NoteInput>;
