// A workgroup's members and its grants (whole services or single features).
import { useState } from "preact/hooks";
import { call, session, type Problem, type Json, type Schema } from "../api";
import { t } from "../i18n";
import { serviceText } from "../labels";
import { ConfirmButton, ErrorNote, Section, useLoad } from "../ui";

export function WorkgroupExtras({ row, reload }: { row: Schema<"Workgroup">; reload: () => void }) {
  const corp = session.value!.credentials.corp;
  const tree = useLoad(() => call<Json<"corp.getTree">>("GET", `/api/corp/${corp}/tree`), [corp]);
  const users = useLoad(() => call<Json<"user.list">>("GET", "/api/user", { query: { limit: 500 } }), []);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [add, setAdd] = useState("");
  const act = async (method: "POST" | "DELETE", path: string) => {
    try {
      await call(method, `/api/workgroup/${row.id}${path}`);
      setProblem(null);
      reload();
    } catch (e) {
      setProblem(e as Problem);
    }
  };
  const userIds: string[] = row.user_ids ?? [];
  return (
    <>
      <Section title={t("workgroup.members")}>
        <ErrorNote problem={problem} />
        <ul class="chips">
          {userIds.map((id) => {
            const u = users.data?.items.find((x) => x.id === id);
            return (
              <li key={id}>
                {u ? `${u.name} (${u.login})` : id}{" "}
                <ConfirmButton label={t("common.remove")} message={t("workgroup.removeMember", { name: u?.name ?? id })} onConfirm={() => act("DELETE", `/user/${id}`)} />
              </li>
            );
          })}
        </ul>
        <div class="toolbar">
          <label for="wg-add-user">{t("workgroup.addMember")}</label>
          <select id="wg-add-user" value={add} onChange={(e) => setAdd(e.currentTarget.value)}>
            <option value="">—</option>
            {(users.data?.items ?? [])
              .filter((u) => !userIds.includes(u.id))
              .map((u) => (
                <option key={u.id} value={u.id}>
                  {`${u.name} (${u.login})`}
                </option>
              ))}
          </select>
          <button type="button" disabled={!add} onClick={() => act("POST", `/user/${add}`).then(() => setAdd(""))}>
            {t("common.add")}
          </button>
        </div>
      </Section>
      <Section title={t("workgroup.grants")}>
        <ErrorNote problem={tree.error} />
        {(tree.data?.services ?? []).map((s) => {
          const whole = (
            <label class="check-item">
              <input type="checkbox" checked={(row.service_ids ?? []).includes(s.id)} onChange={(e) => act(e.currentTarget.checked ? "POST" : "DELETE", `/service/${s.id}`)} />{" "}
              {t("workgroup.wholeService", { name: serviceText(s.identifier, s.name) })}
            </label>
          );
          // A service without features is one checkbox; one with features groups them under it.
          if (!(s.features ?? []).length) return <div key={s.id} class="check-row">{whole}</div>;
          return (
            <fieldset key={s.id} class="checks">
              <legend>{whole}</legend>
              {(s.features ?? []).map((f) => (
                <label key={f.id} class="check-item">
                  <input type="checkbox" checked={(row.feature_ids ?? []).includes(f.id)} onChange={(e) => act(e.currentTarget.checked ? "POST" : "DELETE", `/feature/${f.id}`)} /> {f.name}
                </label>
              ))}
            </fieldset>
          );
        })}
      </Section>
    </>
  );
}
