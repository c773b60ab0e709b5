// Menus (super-admin): the tree with what each entry's feature allows, a form that creates an
// entry or edits the chosen one, and the grant of an entry's features to a workgroup.
import { useMemo, useState } from "preact/hooks";
import { api, asText, call, problemOf, type Json, type Schema } from "../api";
import type { components } from "../api.gen";
import { t } from "../i18n";
import { ConfirmButton, ErrorNote, Form, Notice, PageHeader, Section, useLoad, type FieldDef } from "../ui";

type MenuNode = components["schemas"]["MenuNode"];

function fields(parents: [string, string][]): FieldDef[] {
  return [
    { name: "name", label: "f.name", required: true },
    { name: "parent_id", label: "menu.parent", type: "select", options: parents },
    { name: "url", label: "menu.url", hint: "hint.menuUrl" },
    { name: "icon", label: "menu.icon" },
    { name: "position", label: "menu.position", type: "number" },
    { name: "feature_id", label: "f.feature", type: "ref", ref: { path: "/api/feature", label: (f) => asText(f.name) } },
  ];
}

function flatten(nodes: MenuNode[], depth = 0): [MenuNode, number][] {
  return nodes.flatMap((n) => [[n, depth] as [MenuNode, number], ...flatten((n.children ?? []) as MenuNode[], depth + 1)]);
}

export function Menus() {
  const tree = useLoad(async () => {
    const { data, error, response } = await api.GET("/api/menu/tree");
    if (!data) throw problemOf(error, response.status);
    return data.items as MenuNode[];
  }, []);
  const workgroups = useLoad(() => call<Json<"workgroup.list">>("GET", "/api/workgroup", { query: { limit: 500, sort: "name" } }), []);
  const [editing, setEditing] = useState<MenuNode | null>(null);
  const [granted, setGranted] = useState<string | null>(null);
  const initial = useMemo(
    () => ({ name: editing?.name ?? "", parent_id: editing?.parent_id ?? "", url: editing?.url ?? "", icon: editing?.icon ?? "", position: editing ? String(editing.position ?? 0) : "", feature_id: editing?.feature_id ?? "" }),
    [editing, tree.data],
  );
  const rows = flatten(tree.data ?? []);
  // Any entry but the one edited can be its parent (the server refuses cycles deeper down).
  const form = useMemo(() => fields(rows.filter(([m]) => m.id !== editing?.id).map(([m, d]) => [m.id, `${"— ".repeat(d)}${m.name}`])), [tree.data, editing]);
  return (
    <>
      <PageHeader title={t("nav.menus")} />
      <ErrorNote problem={tree.error} />
      {granted && <Notice kind="success">{granted}</Notice>}
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">{t("f.name")}</th>
              <th scope="col">{t("menu.url")}</th>
              <th scope="col">{t("menu.actions")}</th>
              <th scope="col">{t("common.actions")}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map(([m, depth]) => (
              <tr key={m.id}>
                <td class={`depth-${Math.min(depth, 4)}`}>{m.name}</td>
                <td>{m.url ?? "—"}</td>
                <td>{(m.actions ?? []).length}</td>
                <td class="actions">
                  <button type="button" onClick={() => setEditing(m)}>
                    {t("common.edit")}
                  </button>
                  <GrantToWorkgroup menu={m} workgroups={workgroups.data?.items ?? []} onDone={(name) => setGranted(t("menu.granted", { menu: m.name, workgroup: name }))} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {rows.length === 0 && <p class="empty">{t("list.empty")}</p>}
      </div>
      <Section title={editing ? t("menu.editing", { name: editing.name }) : t("menu.new")}>
        {editing && (
          <button type="button" onClick={() => setEditing(null)}>
            {t("menu.new")}
          </button>
        )}
        <Form
          fields={form}
          initial={initial}
          submitLabel={t("common.save")}
          onSubmit={async (v) => {
            const body = { ...(editing ? { id: editing.id } : {}), name: v.name, parent_id: v.parent_id || null, url: v.url || null, icon: v.icon || null, position: v.position === "" ? 0 : Number(v.position), feature_id: v.feature_id || null };
            await call("POST", "/api/menu", { body });
            setEditing(null);
            tree.reload();
          }}
        />
      </Section>
    </>
  );
}

function GrantToWorkgroup({ menu, workgroups, onDone }: { menu: MenuNode; workgroups: Schema<"Workgroup">[]; onDone: (workgroup: string) => void }) {
  const [workgroup, setWorkgroup] = useState("");
  const id = `grant-${menu.id}`;
  const name = workgroups.find((w) => w.id === workgroup)?.name ?? "";
  return (
    <span class="grant">
      <label for={id} class="visually-hidden">
        {t("menu.grantTo", { name: menu.name })}
      </label>
      <select id={id} value={workgroup} onChange={(e) => setWorkgroup(e.currentTarget.value)}>
        <option value="">{t("menu.grantPick")}</option>
        {workgroups.map((w) => (
          <option key={w.id} value={w.id}>
            {w.name}
          </option>
        ))}
      </select>
      {workgroup && (
        <ConfirmButton
          label={t("menu.grant")}
          message={t("menu.grantConfirm", { menu: menu.name, workgroup: name })}
          onConfirm={async () => {
            await call("POST", `/api/menu/${menu.id}/workgroup/${workgroup}`);
            onDone(name);
            setWorkgroup("");
          }}
        />
      )}
    </span>
  );
}
