// System: versions, and (super-admin) the databases' migration status and update.
import { api, isSuper, problemOf } from "../api";
import { t } from "../i18n";
import { ConfirmButton, ErrorNote, Facts, PageHeader, Section, useLoad } from "../ui";

async function versionsOf() {
  const { data, error, response } = await api.GET("/api/core/versions");
  if (!data) throw problemOf(error, response.status);
  return data;
}

async function databases() {
  const { data, error, response } = await api.GET("/api/core/database");
  if (!data) throw problemOf(error, response.status);
  return data;
}

export function SystemScreen() {
  const versions = useLoad(versionsOf, []);
  return (
    <>
      <PageHeader title={t("nav.system")} />
      <Section title={t("system.versions")}>
        <ErrorNote problem={versions.error} />
        {versions.data && (
          <Facts
            items={[
              [t("system.api"), versions.data.api],
              [t("system.platformSchema"), String(versions.data.platform_schema)],
              [t("system.tenantSchema"), String(versions.data.tenant_schema)],
              [t("system.runtime"), versions.data.runtime],
            ]}
          />
        )}
      </Section>
      {isSuper.value && <Databases />}
    </>
  );
}

function Databases() {
  const db = useLoad(databases, []);
  const pending = db.data ? db.data.platform.pending.length + db.data.corps.reduce((n, c) => n + c.pending.length, 0) : 0;
  return (
    <Section title={t("system.databases")}>
      <ErrorNote problem={db.error} />
      {db.data && (
        <>
          <p>{pending === 0 ? t("system.upToDate") : t("system.pending", { n: pending })}</p>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">{t("system.database")}</th>
                  <th scope="col">{t("system.version")}</th>
                  <th scope="col">{t("system.latest")}</th>
                  <th scope="col">{t("f.corpStatus")}</th>
                </tr>
              </thead>
              <tbody>
                <tr>
                  <td>{t("system.platform")}</td>
                  <td>{db.data.platform.version}</td>
                  <td>{db.data.platform.latest}</td>
                  <td>—</td>
                </tr>
                {db.data.corps.map((c) => (
                  <tr key={c.corp_id}>
                    <td>{c.auth_name}</td>
                    <td>{c.version}</td>
                    <td>{c.latest}</td>
                    <td>{c.status}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <ConfirmButton
            label={t("system.update")}
            message={t("system.updateConfirm")}
            onConfirm={async () => {
              const { error, response } = await api.POST("/api/core/database/update");
              if (!response.ok) throw problemOf(error, response.status);
              db.reload();
            }}
          />
        </>
      )}
    </Section>
  );
}
