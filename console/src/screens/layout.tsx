// A RADIUS layout's attributes, the template variables, and the render preview for a contract and NAS.
import { useMemo, useState } from "preact/hooks";
import { asText, call, type Json, type Schema } from "../api";
import { lang, t, tx } from "../i18n";
import { ConfirmButton, ErrorNote, Form, RefSelect, Section, useLoad, type FieldDef } from "../ui";

export function LayoutExtras({ row, replace }: { row: Schema<"Layout">; replace: (r: Schema<"Layout">) => void }) {
  const fields: FieldDef[] = [
    { name: "attribute_id", label: "f.attribute", type: "ref", required: true, ref: { path: "/api/isp/radius-attribute", label: (r) => asText(r.name) } },
    { name: "operator", label: "f.operator", type: "select", required: true, options: [[":=", ":="], ["=", "="], ["+=", "+="]] },
    { name: "value", label: "f.value", required: true, hint: "hint.template" },
  ];
  const initial = useMemo(() => ({ attribute_id: "", operator: ":=", value: "" }), [row.attributes?.length]);
  const [contract, setContract] = useState("");
  const [nas, setNas] = useState("");
  const render = useLoad(
    () => (contract ? call<Json<"isp.renderLayout">>("GET", `/api/isp/layout/${row.id}/render/${contract}`, { query: nas ? { nas_id: nas } : {} }) : Promise.resolve(null)),
    [row.id, row.updated_at, contract, nas, row.attributes?.length],
  );
  const variables = useLoad(() => call<Json<"isp.listLayoutVariables">>("GET", "/api/isp/layout/variables"), []);
  return (
    <>
      <Section title={t("layout.attributes")}>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{t("f.attribute")}</th>
                <th scope="col">{t("f.operator")}</th>
                <th scope="col">{t("f.value")}</th>
                <th scope="col">{t("common.actions")}</th>
              </tr>
            </thead>
            <tbody>
              {(row.attributes ?? []).map((a) => (
                <tr key={a.attribute_id}>
                  <td>{a.name}</td>
                  <td>
                    <code>{a.operator}</code>
                  </td>
                  <td>
                    <code>{a.value}</code>
                  </td>
                  <td>
                    <ConfirmButton danger label={t("common.remove")} message={t("layout.removeConfirm", { name: a.name })} onConfirm={async () => replace(await call<Json<"isp.removeLayoutAttribute">>("DELETE", `/api/isp/layout/${row.id}/attribute/${a.attribute_id}`))} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {(row.attributes ?? []).length === 0 && <p class="empty">{t("layout.noAttributes")}</p>}
        </div>
        <h3>{t("layout.addAttribute")}</h3>
        <Form fields={fields} initial={initial} submitLabel={t("common.add")} onSubmit={async (v) => replace(await call<Json<"isp.addLayoutAttribute">>("POST", `/api/isp/layout/${row.id}/attribute`, { body: v }))} />
        {variables.data && (
          <details>
            <summary>{t("layout.variables")}</summary>
            <ul class="vars">
              {variables.data.items.map((v) => (
                <li key={v.name}>
                  <code>{`{{${v.name}}}`}</code> — {lang.value === "en" ? v.description : tx(`layoutVar.${v.name}`, v.description)}
                </li>
              ))}
            </ul>
          </details>
        )}
      </Section>
      <Section title={t("layout.render")}>
        <div class="form">
          <div class="field">
            <label for="render-contract">{t("f.contract")}</label>
            <RefSelect id="render-contract" path="/api/contract" labelOf={(c) => `${c.number} — ${c.customer?.name ?? ""}`} value={contract} onChange={setContract} />
          </div>
          <div class="field">
            <label for="render-nas">{t("f.nas")}</label>
            <RefSelect id="render-nas" path="/api/isp/nas" labelOf={(n) => `${n.name} (${n.ip})`} value={nas} onChange={setNas} />
          </div>
        </div>
        <ErrorNote problem={render.error} />
        {render.data && (
          <div class="table-wrap" aria-live="polite">
            <table>
              <caption>{t("layout.rendered")}</caption>
              <thead>
                <tr>
                  <th scope="col">{t("f.attribute")}</th>
                  <th scope="col">{t("f.operator")}</th>
                  <th scope="col">{t("f.value")}</th>
                </tr>
              </thead>
              <tbody>
                {render.data.attributes.map((a) => (
                  <tr key={a.name}>
                    <td>{a.name}</td>
                    <td>
                      <code>{a.operator}</code>
                    </td>
                    <td>
                      <code class="rendered-value">{a.value}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
    </>
  );
}
