// RADIUS sessions with disconnect, pool usage and authorize attempts (routes.md "Operator
// additions").
import { useState } from "preact/hooks";
import { call, type Contract, type DisconnectResult, type Json, type RadiusSession, type Schema } from "../api";
import { fmtDate, fmtNumber, t, tx } from "../i18n";
import { ConfirmButton, ErrorNote, Facts, Link, ListView, Notice, PageHeader, Section, useLoad, type Column } from "../ui";

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${fmtNumber(v, 1)} ${units[i]}`;
}

export function duration(s: number | null | undefined): string {
  if (s === null || s === undefined) return "—";
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h} h ${m} min` : `${m} min`;
}

/** What the NAS did with a Disconnect-Request, as a sentence (outcome-specific, so that it agrees in pt-BR). */
export function outcomeText(r: { outcome: string; attempts: number }): string {
  return t("session.outcome", { outcome: tx(`enum.${r.outcome}`, r.outcome), attempts: r.attempts });
}

/** Why an authorize attempt was refused, in the operator's language. */
export function reasonText(reason: string | null | undefined): string {
  if (!reason) return "—";
  return tx(`reason.${reason}`, reason);
}

const stateBadge = (r: RadiusSession) => <span class={`badge ${r.state === "online" ? "ok" : r.state === "stale" ? "bad" : "off"}`}>{tx(`enum.${r.state}`, r.state)}</span>;

export const SESSION_COLUMNS: Column<RadiusSession>[] = [
  { key: "username", label: "f.username" },
  { key: "nas_name", label: "f.nas", sort: false },
  { key: "framed_ip", label: "f.framed_ip" },
  { key: "started_at", label: "f.started_at" },
  { key: "state", label: "f.state", render: stateBadge },
  { key: "session_time", label: "f.session_time", render: (r) => duration(r.session_time) },
  { key: "input_bytes", label: "f.traffic", render: (r) => `↓ ${bytes(r.output_bytes)} ↑ ${bytes(r.input_bytes)}` },
];

const SESSION_FILTERS = [{ name: "state", label: "f.state" as const, options: ["online", "stale", "closed"].map((s) => [s, `enum.${s}`] as [string, string]) }];

export function SessionList() {
  return (
    <>
      <PageHeader title={t("nav.sessions")} />
      <ListView path="/api/isp/session" label={t("nav.sessions")} columns={SESSION_COLUMNS} filters={SESSION_FILTERS} rowHref={(r) => `/sessions/${r.id}`} />
    </>
  );
}

/** The sessions of one contract or NAS, inside its detail. */
export function SessionsOf({ query, disconnectAll }: { query: Record<string, string>; disconnectAll?: { path: string; message: string } }) {
  const [results, setResults] = useState<DisconnectResult[] | null>(null);
  return (
    <Section title={t("nav.sessions")}>
      {disconnectAll && (
        <ConfirmButton danger label={t("session.disconnectAll")} message={disconnectAll.message} onConfirm={async () => setResults((await call<{ items: DisconnectResult[] }>("POST", disconnectAll.path)).items)} />
      )}
      {results && <Notice>{results.length ? results.map(outcomeText).join(" ") : t("session.noneOnline")}</Notice>}
      <ListView path="/api/isp/session" fixedQuery={query} pageParam="s_" search={false} label={t("nav.sessions")} columns={SESSION_COLUMNS} filters={SESSION_FILTERS} rowHref={(r) => `/sessions/${r.id}`} />
    </Section>
  );
}

export function SessionDetail({ id }: { id: string }) {
  const { data: s, error, reload } = useLoad(() => call<Json<"isp.getSession">>("GET", `/api/isp/session/${id}`), [id]);
  const [result, setResult] = useState<DisconnectResult | null>(null);
  const contract = useLoad(() => (s?.contract_id ? call<Contract>("GET", `/api/contract/${s.contract_id}`) : Promise.resolve(null)), [s?.contract_id]);
  const c = contract.data;
  return (
    <>
      <PageHeader title={s ? `${t("r.session")}: ${s.username}` : t("r.session")}>
        {s && s.state !== "closed" && (
          <ConfirmButton
            danger
            label={t("session.disconnect")}
            message={t("session.disconnectConfirm", { username: s.username, nas: s.nas_name ?? "" })}
            onConfirm={async () => {
              setResult(await call<DisconnectResult>("POST", `/api/isp/session/${id}/disconnect`));
              reload();
            }}
          />
        )}
      </PageHeader>
      <p>
        <Link to="/sessions">← {t("nav.sessions")}</Link>
      </p>
      <ErrorNote problem={error} />
      {result && <Notice kind={result.outcome === "ack" ? "success" : "warning"}>{outcomeText(result)}</Notice>}
      {s && (
        <Section title={t("r.session")}>
          <Facts
            items={[
              [t("f.username"), s.username],
              [t("f.state"), stateBadge(s)],
              [t("f.nas"), s.nas_name],
              [t("f.customer"), c?.customer ? <Link to={`/customers/${c.customer.id}`}>{c.customer.name}</Link> : null],
              [t("f.contract"), s.contract_id ? <Link to={`/contracts/${s.contract_id}`}>{c ? c.number : t("session.openContract")}</Link> : null],
              [t("f.framed_ip"), s.framed_ip],
              [t("f.calling_station_id"), s.calling_station_id],
              [t("f.started_at"), fmtDate(s.started_at)],
              [t("f.updated_at"), fmtDate(s.updated_at)],
              [t("f.stopped_at"), s.stopped_at ? fmtDate(s.stopped_at) : null],
              [t("f.session_time"), duration(s.session_time)],
              [t("f.download"), bytes(s.output_bytes)],
              [t("f.upload"), bytes(s.input_bytes)],
              [t("f.terminate_cause"), s.terminate_cause],
              [t("f.acct_session_id"), s.acct_session_id],
            ]}
          />
        </Section>
      )}
    </>
  );
}

export function AttemptList() {
  return (
    <>
      <PageHeader title={t("nav.attempts")} />
      <ListView
        path="/api/isp/radius/attempts"
        label={t("nav.attempts")}
        filters={[{ name: "outcome", label: "f.outcome", options: ["accept", "reject", "notfound"].map((s) => [s, `enum.${s}`]) }]}
        columns={[
          { key: "at", label: "f.at" },
          { key: "username", label: "f.username" },
          { key: "nas_ip", label: "f.ip" },
          { key: "outcome", label: "f.outcome", render: (r) => <span class={`badge ${r.outcome === "accept" ? "ok" : "bad"}`}>{tx(`enum.${r.outcome}`, r.outcome)}</span> },
          { key: "reason", label: "f.reason", render: (r) => reasonText(r.reason) },
        ]}
      />
    </>
  );
}

export function PoolUsage({ row }: { row: Schema<"Pool"> }) {
  const usage = useLoad(() => call<Json<"isp.listPoolUsage">>("GET", `/api/isp/pool/${row.id}/usage`), [row.id]);
  return (
    <Section title={t("pool.usage")}>
      <ErrorNote problem={usage.error} />
      {usage.data && (
        <>
          <p>{usage.data.size === null ? t("pool.usedOnly", { used: usage.data.used }) : t("pool.used", { used: usage.data.used, size: usage.data.size })}</p>
          {usage.data.size ? <progress max={usage.data.size} value={usage.data.used} aria-label={t("pool.usage")} /> : null}
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">{t("f.ip")}</th>
                  <th scope="col">{t("pool.source")}</th>
                </tr>
              </thead>
              <tbody>
                {usage.data.items.map((i) => (
                  <tr key={i.address}>
                    <td>{i.address}</td>
                    <td>{i.source === "session" ? <Link to={`/sessions/${i.id}`}>{t("r.session")}</Link> : <Link to={`/contracts/${i.id}`}>{t("r.contract")}</Link>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {usage.data.items.length === 0 && <p class="empty">{t("pool.empty")}</p>}
          </div>
        </>
      )}
    </Section>
  );
}

