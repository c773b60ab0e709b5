// A feature's actions (permission keys): add and remove.
import { useMemo } from "preact/hooks";
import { call, type Json, type Schema } from "../api";
import { t } from "../i18n";
import { ConfirmButton, Form, Section, type FieldDef } from "../ui";

export function FeatureActions({ row, replace }: { row: Schema<"Feature">; replace: (r: Schema<"Feature">) => void }) {
  const fields: FieldDef[] = [
    { name: "action", label: "f.action", required: true, hint: "hint.action" },
    { name: "name", label: "f.name" },
  ];
  const initial = useMemo(() => ({ action: "", name: "" }), [row.actions?.length]);
  return (
    <Section title={t("f.actions")}>
      <ul class="chips">
        {(row.actions ?? []).map((a) => (
          <li key={a.id}>
            <code>{a.action}</code>{" "}
            <ConfirmButton
              danger
              label={t("common.remove")}
              message={t("feature.removeAction", { name: a.action })}
              onConfirm={async () => {
                await call("DELETE", `/api/feature/${row.id}/action/${a.id}`);
                replace(await call<Json<"feature.get">>("GET", `/api/feature/${row.id}`));
              }}
            />
          </li>
        ))}
      </ul>
      <Form fields={fields} initial={initial} submitLabel={t("common.add")} onSubmit={async (v) => replace(await call<Json<"feature.createAction">>("POST", `/api/feature/${row.id}/action`, { body: { action: v.action, name: v.name || null } }))} />
    </Section>
  );
}
