// The installation's checks (GET /api/system/doctor, super-admin; the same as `corpadmin doctor`).
// The server writes each detail and fix in English with the paths and numbers it found: English
// shows them as they are; Portuguese says what the check found in its own words and keeps the
// server's text as the technical detail.
import type { ComponentChildren } from "preact";
import { api, isSuper, problemOf } from "../api";
import { lang, t, tx } from "../i18n";
import { ErrorNote, PageHeader, useLoad } from "../ui";

async function runDoctor() {
  const { data, error, response } = await api.GET("/api/system/doctor");
  if (!data) throw problemOf(error, response.status);
  return data.checks;
}

type Check = Awaited<ReturnType<typeof runDoctor>>[number];

const STATUS_CLASS: Record<Check["status"], string> = { ok: "ok", warn: "warn", fail: "bad" };

export function checkName(name: string): string {
  return tx(`doctor.check.${name}`, name);
}

function Technical({ text, fix }: { text: string; fix?: boolean }) {
  return (
    <details class="technical">
      <summary>{t(fix ? "doctor.technicalFix" : "doctor.technical")}</summary>
      <code lang="en">{text}</code>
    </details>
  );
}

function detail(c: Check): ComponentChildren {
  if (lang.value === "en") return c.detail;
  const words = tx(`doctor.${c.status === "ok" ? "ok" : "bad"}.${c.name}`, "");
  return (
    <>
      {words && <p>{words}</p>}
      <Technical text={c.detail} />
    </>
  );
}

function fix(c: Check): ComponentChildren {
  if (!c.fix) return "—";
  if (lang.value === "en") return c.fix;
  const words = tx(`doctor.fix.${c.name}`, "");
  return (
    <>
      {words && <p>{words}</p>}
      <Technical text={c.fix} fix />
    </>
  );
}

export function DoctorScreen() {
  const checks = useLoad(runDoctor, []);
  if (!isSuper.value) return null;
  const list = checks.data ?? [];
  const count = (s: Check["status"]) => list.filter((c) => c.status === s).length;
  return (
    <>
      <PageHeader title={t("nav.doctor")}>
        <button type="button" onClick={checks.reload} disabled={checks.loading}>
          {checks.loading ? t("doctor.running") : t("doctor.rerun")}
        </button>
      </PageHeader>
      <p>{t("doctor.intro")}</p>
      <ErrorNote problem={checks.error} />
      {checks.data && (
        <p role="status">{t("doctor.summary", { ok: count("ok"), warn: count("warn"), fail: count("fail") })}</p>
      )}
      <div class="table-wrap cards-on-phone" aria-busy={checks.loading}>
        <table>
          <thead>
            <tr>
              <th scope="col">{t("doctor.check")}</th>
              <th scope="col">{t("f.status")}</th>
              <th scope="col">{t("doctor.detail")}</th>
              <th scope="col">{t("doctor.fix")}</th>
            </tr>
          </thead>
          <tbody>
            {list.map((c) => (
              <tr key={c.name} class={`doctor-${c.status}`}>
                <th scope="row" data-label={t("doctor.check")}>
                  {checkName(c.name)}
                </th>
                <td data-label={t("f.status")}>
                  <span class={`badge ${STATUS_CLASS[c.status]}`}>{t(`doctor.status.${c.status}`)}</span>
                </td>
                <td data-label={t("doctor.detail")}>{detail(c)}</td>
                <td data-label={t("doctor.fix")}>{fix(c)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
