// A person's address form.
import { useMemo } from "preact/hooks";
import { call, type Json, type Schema } from "../api";
import { t } from "../i18n";
import { Form, Section } from "../ui";
import { ADDRESS_FIELDS, addressOf, addressValues } from "./address";

export function PersonAddress({ row, replace }: { row: Schema<"Person">; replace: (r: Schema<"Person">) => void }) {
  const initial = useMemo(() => addressValues(row.address), [row.updated_at]);
  return (
    <Section title={t("person.address")}>
      <Form fields={ADDRESS_FIELDS} initial={initial} submitLabel={t("common.save")} onSubmit={async (v) => replace(await call<Json<"person.setAddress">>("POST", `/api/person/${row.id}/address`, { body: addressOf(v) }))} />
    </Section>
  );
}
