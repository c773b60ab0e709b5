// A NAS's health (routes.md "Network operations additions": health, online, last_accounting_at),
// its online sessions with the customer they belong to, and the RFC 5176 test of its port and secret.
import { useState } from "preact/hooks";
import { api, problemOf, type Nas, type Problem } from "../api";
import { fmtDate, lang, t } from "../i18n";
import { ErrorNote, Facts, Link, Notice, Section, useLoad, type Column, type Filter } from "../ui";
import { bytes, duration } from "./radius";

type NasTestResult = NonNullable<Awaited<ReturnType<typeof testNas>>>;
type NasHealth = Nas["health"];

/** "3 min ago" / "há 3 minutos", in the chosen language; the full date in the tooltip. */
export function relativeTime(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return t("ops.never");
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  const f = new Intl.RelativeTimeFormat(lang.value, { numeric: "auto" });
  const abs = Math.abs(seconds);
  if (abs < 60) return f.format(seconds, "second");
  if (abs < 3600) return f.format(Math.round(seconds / 60), "minute");
  if (abs < 86400) return f.format(Math.round(seconds / 3600), "hour");
  return f.format(Math.round(seconds / 86400), "day");
}

export function RelativeTime({ at }: { at: string | null | undefined }) {
  if (!at) return <>{t("ops.never")}</>;
  return (
    <time dateTime={at} title={fmtDate(at)}>
      {relativeTime(at)}
    </time>
  );
}

const HEALTH_CLASS: Record<NasHealth, string> = { ok: "ok", quiet: "bad", unknown: "off" };

export function HealthBadge({ health }: { health: NasHealth }) {
  return <span class={`badge ${HEALTH_CLASS[health]}`}>{t(`nas.health.${health}`)}</span>;
}

/** The NAS list's health columns (the rows are the list's generic rows). */
export const NAS_HEALTH_COLUMNS: Column[] = [
  { key: "health", label: "nas.health", render: (r) => <HealthBadge health={(r as Nas).health} /> },
  { key: "online", label: "nas.online", render: (r) => String((r as Nas).online) },
  { key: "last_accounting_at", label: "nas.lastAccounting", render: (r) => <RelativeTime at={(r as Nas).last_accounting_at} /> },
];

/** The NAS list's ?health filter. */
export const NAS_HEALTH_FILTER: Filter = { name: "health", label: "nas.health", options: (["ok", "quiet", "unknown"] as const).map((h) => [h, `nas.health.${h}`]) };

async function testNas(id: string) {
  const { data, error, response } = await api.POST("/api/isp/nas/{id}/test", { params: { path: { id } } });
  if (!data) throw problemOf(error, response.status);
  return data;
}

/** What a test's answer proves, in plain words. */
function testText(r: NasTestResult): { kind: "success" | "warning"; text: string } {
  if (r.outcome === "ack") return { kind: "success", text: t("nas.test.ack", { ms: r.ms }) };
  if (r.outcome === "nak" && r.error_cause === 503) return { kind: "success", text: t("nas.test.nak503", { ms: r.ms }) };
  if (r.outcome === "nak") return { kind: "warning", text: t("nas.test.nak", { ms: r.ms, cause: r.error_cause ?? "—" }) };
  return { kind: "warning", text: t("nas.test.timeout", { ms: r.ms }) };
}

/** The NAS page's sections: health, the test button, its online sessions. */
export function NasOps({ nas }: { nas: Nas }) {
  const [result, setResult] = useState<NasTestResult | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setBusy(true);
    setResult(null);
    setProblem(null);
    try {
      setResult(await testNas(nas.id));
    } catch (e) {
      setProblem(e as Problem);
    } finally {
      setBusy(false);
    }
  };
  const said = result && testText(result);
  return (
    <>
      <Section title={t("nas.healthTitle")}>
        <Facts
          items={[
            [t("nas.health"), <HealthBadge health={nas.health} />],
            [t("nas.online"), String(nas.online)],
            [t("nas.lastAccounting"), <RelativeTime at={nas.last_accounting_at} />],
          ]}
        />
        <p class="hint">{t(`nas.healthHint.${nas.health}`)}</p>
      </Section>
      <Section title={t("nas.test")}>
        <p>{t("nas.testHint")}</p>
        <div class="toolbar">
          <button type="button" onClick={run} disabled={busy} aria-describedby="nas-test-result">
            {busy ? t("nas.testing") : t("nas.testButton")}
          </button>
        </div>
        <div id="nas-test-result" aria-live="polite">
          {result && said && (
            <>
              <Facts
                items={[
                  [t("nas.test.outcome"), <span class={`badge ${said.kind === "success" ? "ok" : "bad"}`}>{t(`nas.test.outcome.${result.outcome}`)}</span>],
                  [t("nas.test.errorCause"), result.error_cause === null ? "—" : String(result.error_cause)],
                  [t("nas.test.ms"), `${result.ms} ms`],
                ]}
              />
              <Notice kind={said.kind}>{said.text}</Notice>
            </>
          )}
          <ErrorNote problem={problem} />
        </div>
      </Section>
      <NasSessions id={nas.id} />
    </>
  );
}

async function nasSessions(id: string) {
  const { data, error, response } = await api.GET("/api/isp/nas/{id}/sessions", { params: { path: { id }, query: { limit: 100 } } });
  if (!data) throw problemOf(error, response.status);
  // The customer of each contract, for the link to the customer page (one read per contract).
  const ids = [...new Set(data.items.map((s) => s.contract_id).filter((c): c is string => !!c))];
  const contracts = await Promise.all(
    ids.map(async (cid) => {
      const c = await api.GET("/api/contract/{id}", { params: { path: { id: cid } } });
      return c.data ? ([cid, { number: c.data.number, customerId: c.data.customer.id, customerName: c.data.customer.name }] as const) : null;
    }),
  );
  return { ...data, contracts: new Map(contracts.filter((c) => c !== null)) };
}

function NasSessions({ id }: { id: string }) {
  const list = useLoad(() => nasSessions(id), [id]);
  const d = list.data;
  return (
    <Section title={t("nas.onlineSessions")}>
      <ErrorNote problem={list.error} />
      <div class="table-wrap cards-on-phone" aria-busy={list.loading}>
        <table>
          <thead>
            <tr>
              <th scope="col">{t("f.username")}</th>
              <th scope="col">{t("nas.customer")}</th>
              <th scope="col">{t("f.framed_ip")}</th>
              <th scope="col">{t("f.started_at")}</th>
              <th scope="col">{t("f.session_time")}</th>
              <th scope="col">{t("f.traffic")}</th>
            </tr>
          </thead>
          <tbody>
            {(d?.items ?? []).map((s) => {
              const c = s.contract_id ? d!.contracts.get(s.contract_id) : undefined;
              return (
                <tr key={s.id}>
                  <td data-label={t("f.username")}>
                    <Link to={`/sessions/${s.id}`}>{s.username}</Link>
                  </td>
                  <td data-label={t("nas.customer")}>{c ? <Link to={`/customers/${c.customerId}`}>{`${c.customerName} · ${c.number}`}</Link> : "—"}</td>
                  <td data-label={t("f.framed_ip")}>{s.framed_ip ?? "—"}</td>
                  <td data-label={t("f.started_at")}>{fmtDate(s.started_at)}</td>
                  <td data-label={t("f.session_time")}>{duration(s.session_time)}</td>
                  <td data-label={t("f.traffic")}>{`↓ ${bytes(s.output_bytes)} ↑ ${bytes(s.input_bytes)}`}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {d && d.items.length === 0 && <p class="empty">{t("nas.noneOnline")}</p>}
        {d && d.total > d.items.length && <p class="hint">{t("nas.moreOnline", { n: d.total - d.items.length })}</p>}
      </div>
    </Section>
  );
}
