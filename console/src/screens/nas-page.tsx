// The NAS page's sections: its health, the RFC 5176 test of its port and secret, and its online
// sessions with the customer each belongs to. Loaded with the NAS page (screens/lazy.tsx).
import { useState } from "preact/hooks";
import { api, problemOf, type Nas, type Problem } from "../api";
import { fmtDate, t } from "../i18n";
import { ErrorNote, Facts, Link, Notice, Section, useLoad } from "../ui";
import { HealthBadge, RelativeTime } from "./nas";
import { ot } from "./ops-texts";
import { bytes, duration } from "./radius";

type NasTestResult = Awaited<ReturnType<typeof testNas>>;

async function testNas(id: string) {
  const { data, error, response } = await api.POST("/api/isp/nas/{id}/test", { params: { path: { id } } });
  if (!data) throw problemOf(error, response.status);
  return data;
}

/** What a test's answer proves, in plain words. */
function testText(r: NasTestResult): { kind: "success" | "warning"; text: string } {
  if (r.outcome === "ack") return { kind: "success", text: ot("nas.test.ack", { ms: r.ms }) };
  if (r.outcome === "nak" && r.error_cause === 503) return { kind: "success", text: ot("nas.test.nak503", { ms: r.ms }) };
  if (r.outcome === "nak") return { kind: "warning", text: ot("nas.test.nak", { ms: r.ms, cause: r.error_cause ?? "—" }) };
  return { kind: "warning", text: ot("nas.test.timeout", { ms: r.ms }) };
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
      <Section title={ot("nas.healthTitle")}>
        <Facts
          items={[
            [t("nas.health"), <HealthBadge health={nas.health} />],
            [t("nas.online"), String(nas.online)],
            [t("nas.lastAccounting"), <RelativeTime at={nas.last_accounting_at} />],
          ]}
        />
        <p class="hint">{ot(`nas.healthHint.${nas.health}`)}</p>
      </Section>
      <Section title={ot("nas.test")}>
        <p>{ot("nas.testHint")}</p>
        <div class="toolbar">
          <button type="button" onClick={run} disabled={busy} aria-describedby="nas-test-result">
            {busy ? ot("nas.testing") : ot("nas.testButton")}
          </button>
        </div>
        <div id="nas-test-result" aria-live="polite">
          {result && said && (
            <>
              <Facts
                items={[
                  [ot("nas.test.outcome"), <span class={`badge ${said.kind === "success" ? "ok" : "bad"}`}>{ot(`nas.test.outcome.${result.outcome}`)}</span>],
                  [ot("nas.test.errorCause"), result.error_cause === null ? "—" : String(result.error_cause)],
                  [ot("nas.test.ms"), `${result.ms} ms`],
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
    <Section title={ot("nas.onlineSessions")}>
      <ErrorNote problem={list.error} />
      <div class="table-wrap cards-on-phone" aria-busy={list.loading}>
        <table>
          <thead>
            <tr>
              <th scope="col">{t("f.username")}</th>
              <th scope="col">{ot("nas.customer")}</th>
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
                  <td data-label={ot("nas.customer")}>{c ? <Link to={`/customers/${c.customerId}`}>{`${c.customerName} · ${c.number}`}</Link> : "—"}</td>
                  <td data-label={t("f.framed_ip")}>{s.framed_ip ?? "—"}</td>
                  <td data-label={t("f.started_at")}>{fmtDate(s.started_at)}</td>
                  <td data-label={t("f.session_time")}>{duration(s.session_time)}</td>
                  <td data-label={t("f.traffic")}>{`↓ ${bytes(s.output_bytes)} ↑ ${bytes(s.input_bytes)}`}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {d && d.items.length === 0 && <p class="empty">{ot("nas.noneOnline")}</p>}
        {d && d.total > d.items.length && <p class="hint">{ot("nas.moreOnline", { n: d.total - d.items.length })}</p>}
      </div>
    </Section>
  );
}
