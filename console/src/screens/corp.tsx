// A corporation (super-admin): its status, the services it may use, its members.
import { useState } from "preact/hooks";
import { call, type Json, type Problem, type Schema } from "../api";
import { t, tx } from "../i18n";
import { serviceText } from "../labels";
import { ConfirmButton, ErrorNote, RefSelect, Section, StatusBadge, useLoad } from "../ui";

/** The status routes: each answers the corporation (typed as corp.enable's answer below). */
const CORP_STATUSES = [
  ["ENABLED", "enable", "corp.enableConfirm"],
  ["BLOCKED", "block", "corp.blockConfirm"],
  ["MAINTENANCE", "maintenance", "corp.maintenanceConfirm"],
  ["NEEDS_UPDATE", "needs-update", "corp.needsUpdateConfirm"],
] as const;

export function CorpStatus({ row, replace }: { row: Schema<"Corporation">; replace: (r: Schema<"Corporation">) => void }) {
  return (
    <Section title={t("corp.status")}>
      <p>
        {t("corp.current")} <StatusBadge on={row.status === "ENABLED"} onText={tx(`enum.${row.status}`)} offText={tx(`enum.${row.status}`)} />
      </p>
      <div class="toolbar">
        {CORP_STATUSES.filter(([s]) => s !== row.status).map(([s, path, message]) => (
          <ConfirmButton
            key={s}
            danger={s !== "ENABLED"}
            label={t("corp.setStatus", { status: tx(`enum.${s}`) })}
            message={t(message, { name: row.company_name })}
            onConfirm={async () => replace(await call<Json<"corp.enable">>("POST", `/api/corp/${row.id}/${path}`))}
          />
        ))}
      </div>
    </Section>
  );
}

/** The services a corporation may use (super-admin): enabled ones can be removed, the others added. */
export function CorpServices({ row }: { row: Schema<"Corporation"> }) {
  const all = useLoad(() => call<Json<"service.list">>("GET", "/api/service", { query: { limit: 500, sort: "name" } }), []);
  const tree = useLoad(() => call<Json<"corp.getTree">>("GET", `/api/corp/${row.id}/tree`), [row.id]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const enabled = new Set<string>((tree.data?.services ?? []).map((s) => s.id));
  const change = async (method: "POST" | "DELETE", serviceId: string) => {
    await call(method, `/api/corp/${row.id}/service/${serviceId}`);
    tree.reload();
  };
  return (
    <Section title={t("corp.services")}>
      <ErrorNote problem={problem ?? all.error ?? tree.error} />
      <ul class="chips">
        {(all.data?.items ?? []).map((s) =>
          enabled.has(s.id) ? (
            <li key={s.id}>
              {serviceText(s.identifier, s.name)}{" "}
              <ConfirmButton danger label={t("common.remove")} message={t("corp.removeService", { name: serviceText(s.identifier, s.name), corp: row.company_name })} onConfirm={() => change("DELETE", s.id)} />
            </li>
          ) : (
            <li key={s.id} class="off">
              {serviceText(s.identifier, s.name)}{" "}
              <button type="button" onClick={() => change("POST", s.id).then(() => setProblem(null), (e) => setProblem(e as Problem))}>
                {t("common.add")}
              </button>
            </li>
          ),
        )}
      </ul>
    </Section>
  );
}

/** The corporation's members (super-admin): add an existing user, remove one. */
export function CorpUsers({ row }: { row: Schema<"Corporation"> }) {
  const members = useLoad(() => call<Json<"corp.listUser">>("GET", `/api/corp/${row.id}/user`, { query: { limit: 500 } }), [row.id]);
  const [add, setAdd] = useState("");
  const [problem, setProblem] = useState<Problem | null>(null);
  return (
    <Section title={t("corp.users")}>
      <ErrorNote problem={problem ?? members.error} />
      <ul class="chips">
        {(members.data?.items ?? []).map((u) => (
          <li key={u.id}>
            {`${u.name} (${u.login})`}{" "}
            <ConfirmButton
              danger
              label={t("common.remove")}
              message={t("corp.removeUser", { name: u.name, corp: row.company_name })}
              onConfirm={async () => {
                await call("DELETE", `/api/corp/${row.id}/user/${u.id}`);
                members.reload();
              }}
            />
          </li>
        ))}
      </ul>
      <div class="toolbar">
        <label for="corp-add-user">{t("corp.addUser")}</label>
        <RefSelect id="corp-add-user" path="/api/user" labelOf={(u) => `${u.name} (${u.login})`} value={add} onChange={setAdd} />
        <button
          type="button"
          disabled={!add}
          onClick={() =>
            call("POST", `/api/corp/${row.id}/user/${add}`).then(
              () => {
                setAdd("");
                setProblem(null);
                members.reload();
              },
              (e) => setProblem(e as Problem),
            )
          }
        >
          {t("common.add")}
        </button>
      </div>
    </Section>
  );
}
