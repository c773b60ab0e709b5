// The service's background jobs (GET /api/system/jobs, super-admin): when each last ran, how it
// went, when it runs next, and "Run now"; the list is read again while a job runs.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, isSuper, problemOf, type Problem } from "../api";
import { fmtDate, lang, t } from "../i18n";
import { ot, otx } from "./ops-texts";
import { ErrorNote, Notice, PageHeader, useLoad } from "../ui";
import { RelativeTime } from "./nas";

async function listJobs() {
  const { data, error, response } = await api.GET("/api/system/jobs");
  if (!data) throw problemOf(error, response.status);
  return data.items;
}

type Job = Awaited<ReturnType<typeof listJobs>>[number];

async function runJob(name: string) {
  const { data, error, response } = await api.POST("/api/system/jobs/{name}/run", { params: { path: { name } } });
  if (!data) throw problemOf(error, response.status);
  return data;
}

/** How often the list is read again while a job runs. */
const POLL_MS = 1000;

function OutcomeBadge({ job }: { job: Job }) {
  if (job.running) return <span class="badge off">{ot("jobs.running")}</span>;
  if (!job.last_outcome) return <>{ot("jobs.neverRan")}</>;
  return <span class={`badge ${job.last_outcome === "ok" ? "ok" : "bad"}`}>{ot(`jobs.outcome.${job.last_outcome}`)}</span>;
}

export function JobsScreen() {
  const list = useLoad(listJobs, []);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [started, setStarted] = useState<string | null>(null);
  const running = (list.data ?? []).some((j) => j.running);
  // Cluster mode names the node holding each job; one process has no node to name.
  const clustered = (list.data ?? []).some((j) => j.node !== null);
  useEffect(() => {
    if (!running) return;
    const timer = setTimeout(list.reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [list.data]);
  if (!isSuper.value) return null;
  const run = async (name: string) => {
    setProblem(null);
    setStarted(null);
    try {
      const job = await runJob(name);
      setStarted(job.name);
      list.set((list.data ?? []).map((j) => (j.name === job.name ? job : j)));
    } catch (e) {
      setProblem(e as Problem);
      list.reload();
    }
  };
  return (
    <>
      <PageHeader title={t("nav.jobs")}>
        <button type="button" onClick={list.reload}>
          {ot("jobs.refresh")}
        </button>
      </PageHeader>
      <p>{ot("jobs.intro")}</p>
      <ErrorNote problem={list.error ?? problem} />
      {started && <Notice kind="success">{ot("jobs.started", { name: jobName(started) })}</Notice>}
      <div class="table-wrap cards-on-phone" aria-busy={list.loading && !list.data}>
        <table>
          <thead>
            <tr>
              <th scope="col">{t("f.name")}</th>
              <th scope="col">{ot("jobs.schedule")}</th>
              {clustered && <th scope="col">{ot("jobs.node")}</th>}
              <th scope="col">{ot("jobs.lastStarted")}</th>
              <th scope="col">{ot("jobs.lastFinished")}</th>
              <th scope="col">{t("f.outcome")}</th>
              <th scope="col">{ot("jobs.lastError")}</th>
              <th scope="col">{ot("jobs.next")}</th>
              <th scope="col">{t("common.actions")}</th>
            </tr>
          </thead>
          <tbody>
            {(list.data ?? []).map((j) => (
              <tr key={j.name}>
                <th scope="row" data-label={t("f.name")}>
                  {jobName(j.name)}
                  <br />
                  <code class="hint">{j.name}</code>
                </th>
                <td data-label={ot("jobs.schedule")}>{scheduleText(j.schedule)}</td>
                {clustered && <td data-label={ot("jobs.node")}>{j.node ?? "—"}</td>}
                <td data-label={ot("jobs.lastStarted")}>
                  <RelativeTime at={j.last_started_at} />
                </td>
                <td data-label={ot("jobs.lastFinished")}>{j.last_finished_at ? fmtDate(j.last_finished_at) : "—"}</td>
                <td data-label={t("f.outcome")}>
                  <OutcomeBadge job={j} />
                </td>
                <td data-label={ot("jobs.lastError")}>{j.last_error ? <code lang="en">{j.last_error}</code> : "—"}</td>
                <td data-label={ot("jobs.next")}>{j.next_at ? fmtDate(j.next_at) : ot("jobs.onEvent")}</td>
                <td data-label={t("common.actions")} class="nowrap">
                  <button type="button" disabled={j.running} onClick={() => run(j.name)} aria-label={ot("jobs.runNowOf", { name: jobName(j.name) })}>
                    {ot("jobs.runNow")}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** A job by its name, in words (an unknown job as its name). */
export function jobName(name: string): string {
  return otx(`jobs.name.${name}`, name);
}

/** The server's schedule sentences (src/modules/*: ctx.jobs.add) in Portuguese; one it does not know stays as it is, marked as English. */
const SCHEDULES: [RegExp, (m: RegExpExecArray) => string][] = [
  [/^every (\d+) s$/, (m) => `a cada ${m[1]} s`],
  [/^daily \(entries older than (\d+) days\)$/, (m) => `diário (registros com mais de ${m[1]} dias)`],
  [/^hourly \(checked every minute\); PRAGMA optimize daily$/, () => "de hora em hora (verificado a cada minuto); otimização do banco (PRAGMA optimize) diária"],
  [/^on every commit with events; a sweep every (\d+) s \(every corporation with webhooks every (\d+) min\); run now: a full sweep$/, (m) => `a cada gravação com eventos; uma varredura a cada ${m[1]} s (todas as empresas com webhooks a cada ${m[2]} min); executar agora: varredura completa`],
  [/^on every commit with events; open sockets' sessions checked every (\d+) s$/, (m) => `a cada gravação com eventos; as sessões dos sockets abertos verificadas a cada ${m[1]} s`],
  [/^one timer per metric with an endpoint, at its periodicity; run now: the stored metrics read again$/, () => "um temporizador por métrica com endereço de coleta, na periodicidade dela; executar agora: relê as métricas gravadas"],
  [/^one timer per metric with an endpoint, at its periodicity; every (\d+) s the stored metrics read again$/, (m) => `um temporizador por métrica com endereço de coleta, na periodicidade dela; a cada ${m[1]} s relê as métricas gravadas`],
  [/^every (\d+) s, and (\d+) s after accounting$/, (m) => `a cada ${m[1]} s, e ${m[2]} s depois da contabilização`],
  [/^cron (.+) \(keep (\d+), in (.+)\)$/, (m) => `cron ${m[1]} (mantém ${m[2]}, em ${m[3]})`],
];

export function scheduleText(schedule: string): ComponentChildren {
  if (lang.value === "en") return schedule;
  for (const [re, text] of SCHEDULES) {
    const m = re.exec(schedule);
    if (m) return text(m);
  }
  return <code lang="en">{schedule}</code>;
}
