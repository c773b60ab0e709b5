// Safe IP ranges of the working corporation: once one exists, tokens work only from the ranges.
import { useMemo } from "preact/hooks";
import { call, session, type Page, type Row } from "../api";
import { t } from "../i18n";
import { ConfirmButton, ErrorNote, Form, Notice, PageHeader, Section, useLoad, type FieldDef } from "../ui";

const FIELDS: FieldDef[] = [
  { name: "range", label: "f.range", required: true, hint: "hint.range" },
  { name: "description", label: "f.description" },
];

export function SafeIps() {
  const creds = session.value!.credentials;
  const domain = Object.entries(creds.user.corps).find(([, c]) => c.id === creds.corp)?.[0];
  const list = useLoad(() => (domain ? call<Page<Row>>("GET", `/api/auth/safe-ip/${domain}`, { query: { limit: 500 } }) : Promise.reject({ status: 404 })), [domain]);
  const initial = useMemo(() => ({ range: "", description: "" }), [list.data]);
  return (
    <>
      <PageHeader title={t("nav.safeIp")} />
      <Notice kind="warning">{t("safeip.warning")}</Notice>
      <ErrorNote problem={list.error} />
      <Section title={t("safeip.ranges")}>
        <ul class="chips">
          {(list.data?.items ?? []).map((r) => (
            <li key={r.id}>
              <code>{r.range}</code> {r.description ?? ""}{" "}
              <ConfirmButton
                danger
                label={t("common.remove")}
                message={t("safeip.removeConfirm", { range: r.range })}
                onConfirm={async () => {
                  await call("DELETE", `/api/auth/safe-ip/${domain}/${r.id}`);
                  list.reload();
                }}
              />
            </li>
          ))}
          {list.data?.items.length === 0 && <li class="empty">{t("safeip.none")}</li>}
        </ul>
        <Form
          fields={FIELDS}
          initial={initial}
          submitLabel={t("common.add")}
          onSubmit={async (v) => {
            await call("POST", `/api/auth/safe-ip/${domain}`, { body: { range: v.range, description: v.description || null } });
            list.reload();
          }}
        />
      </Section>
    </>
  );
}
