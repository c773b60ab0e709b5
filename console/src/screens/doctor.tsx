// The installation's checks (GET /api/system/doctor, super-admin; the same as `corpadmin doctor`).
// The server writes each detail and fix in English with the paths and numbers it found: English
// shows them as they are; Portuguese says what the check found in its own words and keeps the
// server's text as the technical detail.
import type { ComponentChildren } from "preact";
import { api, isSuper, problemOf } from "../api";
import { lang, t } from "../i18n";
import { ot, otx } from "./ops-texts";
import { ErrorNote, PageHeader, useLoad } from "../ui";

async function runDoctor() {
  const { data, error, response } = await api.GET("/api/system/doctor");
  if (!data) throw problemOf(error, response.status);
  return data.checks;
}

type Check = Awaited<ReturnType<typeof runDoctor>>[number];

const STATUS_CLASS: Record<Check["status"], string> = { ok: "ok", warn: "warn", fail: "bad" };

export function checkName(name: string): string {
  return otx(`doctor.check.${name}`, name);
}

function Technical({ text, fix }: { text: string; fix?: boolean }) {
  return (
    <details class="technical">
      <summary>{ot(fix ? "doctor.technicalFix" : "doctor.technical")}</summary>
      <code lang="en">{text}</code>
    </details>
  );
}

function detail(c: Check): ComponentChildren {
  if (lang.value === "en") return c.detail;
  const words = otx(`doctor.${c.status === "ok" ? "ok" : "bad"}.${c.name}`, "");
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
  const words = otx(`doctor.fix.${c.name}`, "");
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
  // Failures first, then warnings, each in the server's order.
  const rank = { fail: 0, warn: 1, ok: 2 } as const;
  const list = [...(checks.data ?? [])].sort((a, b) => rank[a.status] - rank[b.status]);
  const count = (s: Check["status"]) => list.filter((c) => c.status === s).length;
  return (
    <>
      <PageHeader title={t("nav.doctor")}>
        <button type="button" onClick={checks.reload} disabled={checks.loading}>
          {checks.loading ? ot("doctor.running") : ot("doctor.rerun")}
        </button>
      </PageHeader>
      <p>{ot("doctor.intro")}</p>
      <ErrorNote problem={checks.error} />
      {checks.data && (
        <p role="status">{ot("doctor.summary", { ok: count("ok"), warn: count("warn"), fail: count("fail") })}</p>
      )}
      <div class="table-wrap cards-on-phone" aria-busy={checks.loading}>
        <table>
          <thead>
            <tr>
              <th scope="col">{ot("doctor.check")}</th>
              <th scope="col">{t("f.status")}</th>
              <th scope="col">{ot("doctor.detail")}</th>
              <th scope="col">{ot("doctor.fix")}</th>
            </tr>
          </thead>
          <tbody>
            {list.map((c) => (
              <tr key={c.name} class={`doctor-${c.status}`}>
                <th scope="row" data-label={ot("doctor.check")}>
                  {checkName(c.name)}
                </th>
                <td data-label={t("f.status")}>
                  <span class={`badge ${STATUS_CLASS[c.status]}`}>{ot(`doctor.status.${c.status}`)}</span>
                </td>
                <td data-label={ot("doctor.detail")}>{detail(c)}</td>
                <td data-label={ot("doctor.fix")}>{fix(c)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
