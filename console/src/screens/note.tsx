// A notepad note, read-only.
import { type Row } from "../api";
import { t } from "../i18n";
import { Section } from "../ui";

export function NoteView({ row }: { row: Row }) {
  return (
    <Section title={row.title ?? t("r.note")}>
      <p class="note">{row.content}</p>
    </Section>
  );
}
