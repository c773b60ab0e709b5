// A notepad note, read-only.
import type { Schema } from "../api";
import { t } from "../i18n";
import { Section } from "../ui";

export function NoteView({ row }: { row: Schema<"Note"> }) {
  return (
    <Section title={row.title ?? t("r.note")}>
      <p class="note">{row.content}</p>
    </Section>
  );
}
