// The customer page (/customers/:id): a person with their contracts, each contract's connection,
// who is online now (live durations, kick), recent sessions and rejected logins, and the actions an
// operator takes there — disconnect, change speed, suspend/activate, edit the address — with each
// contract's traffic in its usage cycle and the history of the person and their contracts.
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { signal } from "@preact/signals";
import { call, can, type Contract, type DisconnectResult, type NetworkPolicy, type Page, type Person, type RadiusAttempt, type RadiusSession } from "../api";
import { fmtDate, fmtMoney, t, tx } from "../i18n";
import { ConfirmButton, ErrorNote, Facts, Form, Link, Notice, PageHeader, Section, useLoad, type FieldDef } from "../ui";
import { ADDRESS_FIELDS, addressOf, addressValues } from "./address";
import { contractBody } from "./contracts";
import { lazy } from "./lazy-load";
import { bytes, duration, outcomeText, reasonText } from "./radius";

// The heavier sections (a chart, the history timeline) load as a chunk when the page first shows them.
const ContractUsage = lazy<{ contractId: string; number: string; refresh?: unknown }>(() => import("./customer-extras").then((m) => m.ContractUsage));
const CustomerHistory = lazy<{ targets: { type: string; id: string }[]; refresh?: unknown }>(() => import("./customer-extras").then((m) => m.CustomerHistory));

/** The current second, shared by every live duration on screen (one timer for all). */
const now = signal(Date.now());
let ticking = 0;
function useTick(): number {
  useEffect(() => {
    const timer = ticking++ === 0 ? setInterval(() => (now.value = Date.now()), 1000) : null;
    return () => {
      ticking--;
      if (timer) clearInterval(timer);
    };
  }, []);
  return now.value;
}

/** How long an online session has been up, counted from its start, second by second. */
export function LiveDuration({ since }: { since: string }) {
  const at = useTick();
  const s = Math.max(0, Math.floor((at - Date.parse(since)) / 1000));
  // Seconds too, so that it visibly counts.
  return <>{`${duration(s)} ${String(s % 60).padStart(2, "0")} s`}</>;
}

const statusClass = (s: string) => (s === "ACTIVE" ? "ok" : s === "SUSPENDED" || s === "CANCELLED" ? "bad" : "off");

type WithContract<T> = T & { contract: Contract };
interface Loaded {
  contracts: Contract[];
  online: WithContract<RadiusSession>[];
  recent: WithContract<RadiusSession>[];
  rejected: WithContract<RadiusAttempt>[];
}

export function CustomerPage({ id }: { id: string }) {
  const person = useLoad(() => call<Person>("GET", `/api/person/${id}`), [id]);
  const [n, setN] = useState(0);
  const reload = () => setN((x) => x + 1);
  const network = can("isp", "/api/isp/session");
  // What a suspension does and whether trust unblock is on (platform.isp reads it; without it, the
  // button shows and the server's answer says when it is off).
  const policy = useLoad<NetworkPolicy | null>(() => (can("isp") ? call<NetworkPolicy>("GET", "/api/isp/policy") : Promise.resolve(null)), []);
  const data = useLoad<Loaded>(async () => {
    const contracts = (await call<Page<Contract>>("GET", "/api/contract", { query: { customer_id: id, limit: 100, sort: "number" } })).items;
    if (!network) return { contracts, online: [], recent: [], rejected: [] };
    const per = await Promise.all(
      contracts.map(async (c) => {
        const [online, recent, rejected] = await Promise.all([
          call<Page<RadiusSession>>("GET", "/api/isp/session", { query: { contract_id: c.id, state: "online", limit: 100 } }),
          call<Page<RadiusSession>>("GET", "/api/isp/session", { query: { contract_id: c.id, limit: 10 } }),
          c.config?.username ? call<Page<RadiusAttempt>>("GET", "/api/isp/radius/attempts", { query: { username: c.config.username, outcome: "reject", limit: 10 } }) : Promise.resolve({ items: [] as RadiusAttempt[] }),
        ]);
        const tag = <T,>(r: T): WithContract<T> => ({ ...r, contract: c });
        return { online: online.items.map(tag), recent: recent.items.filter((s) => s.state !== "online").map(tag), rejected: rejected.items.map(tag) };
      }),
    );
    const newest = (a: string, b: string) => b.localeCompare(a);
    return {
      contracts,
      online: per.flatMap((p) => p.online).sort((a, b) => newest(a.started_at, b.started_at)),
      recent: per.flatMap((p) => p.recent).sort((a, b) => newest(a.started_at, b.started_at)).slice(0, 15),
      rejected: per.flatMap((p) => p.rejected).sort((a, b) => newest(a.at, b.at)).slice(0, 15),
    };
  }, [id, n]);
  const p = person.data;
  if (person.error) return <ErrorNote problem={person.error} />;
  if (!p) return <p aria-busy="true">{t("common.loading")}</p>;
  return (
    <>
      <PageHeader title={p.name}>
        <Link class="button" to={`/persons/${p.id}`}>
          {t("customer.editPerson")}
        </Link>
      </PageHeader>
      <Section title={t("customer.person")}>
        <Facts
          items={[
            [t("f.doc_identity"), p.doc_identity ? `${p.tp_doc_identity ?? ""} ${p.doc_identity}`.trim() : null],
            [t("f.email"), p.email],
            [t("f.phone"), p.phone],
            [t("f.display_name"), p.display_name],
          ]}
        />
      </Section>
      <ErrorNote problem={data.error} />
      {data.data && (
        <>
          {network && <OnlineNow sessions={data.data.online} onChange={reload} />}
          <section aria-labelledby="customer-contracts">
            <h2 id="customer-contracts" class="section-title">
              {t("customer.contracts")}
            </h2>
            {data.data.contracts.length === 0 && <p class="empty">{t("customer.noContracts")}</p>}
            {data.data.contracts.map((c) => (
              <ContractCard key={c.id} c={c} policy={policy.data ?? null} onChange={reload} />
            ))}
          </section>
          {network && <RecentSessions sessions={data.data.recent} />}
          {network && <Rejected attempts={data.data.rejected} />}
          <CustomerHistory
            targets={[...(can("person") ? [{ type: "person", id: p.id }] : []), ...(can("contract") ? data.data.contracts.map((c) => ({ type: "contract", id: c.id })) : [])]}
            refresh={n}
          />
        </>
      )}
    </>
  );
}

function OnlineNow({ sessions, onChange }: { sessions: WithContract<RadiusSession>[]; onChange: () => void }) {
  const [result, setResult] = useState<DisconnectResult | null>(null);
  return (
    <Section title={t("customer.online")}>
      {result && <Notice kind={result.outcome === "ack" ? "success" : "warning"}>{outcomeText(result)}</Notice>}
      {sessions.length === 0 ? (
        <p class="empty">{t("customer.offline")}</p>
      ) : (
        <div class="table-wrap cards-on-phone">
          <table>
            <thead>
              <tr>
                <th scope="col">{t("f.contract")}</th>
                <th scope="col">{t("f.username")}</th>
                <th scope="col">{t("f.nas")}</th>
                <th scope="col">{t("f.framed_ip")}</th>
                <th scope="col">{t("customer.onlineFor")}</th>
                <th scope="col">{t("f.traffic")}</th>
                <th scope="col">{t("common.actions")}</th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((s) => (
                <tr key={s.id}>
                  <td data-label={t("f.contract")}>
                    <Link to={`/contracts/${s.contract.id}`}>{s.contract.number}</Link>
                  </td>
                  <td data-label={t("f.username")}>
                    <Link to={`/sessions/${s.id}`}>{s.username}</Link>
                  </td>
                  <td data-label={t("f.nas")}>{s.nas_name ?? "—"}</td>
                  <td data-label={t("f.framed_ip")}>{s.framed_ip ?? "—"}</td>
                  <td data-label={t("customer.onlineFor")}>
                    <LiveDuration since={s.started_at} />
                  </td>
                  <td data-label={t("f.traffic")}>{`↓ ${bytes(s.output_bytes)} ↑ ${bytes(s.input_bytes)}`}</td>
                  <td class="row-actions">
                    <ConfirmButton
                      danger
                      label={t("session.disconnect")}
                      message={t("session.disconnectConfirm", { username: s.username, nas: s.nas_name ?? "" })}
                      onConfirm={async () => {
                        setResult(await call<DisconnectResult>("POST", `/api/isp/session/${s.id}/disconnect`));
                        onChange();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}

const SPEED_FIELDS: FieldDef[] = [
  { name: "max_download", label: "f.max_download", hint: "hint.speed" },
  { name: "max_upload", label: "f.max_upload", hint: "hint.speed" },
];

/** The contract's network state in words: since when throttled, what a suspension gives it, until when trusted. */
function networkText(c: Contract, policy: NetworkPolicy | null): string | null {
  const n = c.network;
  if (n.state === "throttled") return t("network.throttledSince", { date: fmtDate(n.since) });
  if (n.state === "trusted") return t("network.trustedUntil", { date: fmtDate(n.until) });
  if (n.state !== "suspended") return null;
  const since = n.since ? t("network.suspendedSince", { date: fmtDate(n.since.slice(0, 10)) }) : t("network.suspended");
  if (!policy) return since;
  const gets =
    policy.suspended_mode === "reduce"
      ? t("network.getsReduce", { down: policy.suspended_max_download ?? "—", up: policy.suspended_max_upload ?? "—" })
      : policy.suspended_mode === "redirect"
        ? t("network.getsRedirect")
        : t("network.getsReject");
  return `${since}. ${gets}`;
}

function suspendMessage(number: string, policy: NetworkPolicy | null): string {
  if (policy?.suspended_mode === "reduce") return t("customer.suspendConfirmReduce", { number, down: policy.suspended_max_download ?? "—", up: policy.suspended_max_upload ?? "—" });
  if (policy?.suspended_mode === "redirect") return t("customer.suspendConfirmRedirect", { number });
  return t("customer.suspendConfirm", { number });
}

const FAIR_USE_FIELDS: FieldDef[] = [
  { name: "allowance_gb", label: "f.allowance_gb", type: "number", step: "any", hint: "hint.allowance_gb" },
  { name: "throttle_max_download", label: "f.throttle_max_download", hint: "hint.speed" },
  { name: "throttle_max_upload", label: "f.throttle_max_upload", hint: "hint.speed" },
];

function ContractCard({ c, policy, onChange }: { c: Contract; policy: NetworkPolicy | null; onChange: () => void }) {
  const [row, setRow] = useState(c);
  useEffect(() => setRow(c), [c]);
  const [result, setResult] = useState<DisconnectResult[] | null>(null);
  const [trusted, setTrusted] = useState<string | null>(null);
  const status = row.contract_status;
  const cfg = row.config ?? {};
  const a = row.address ?? null;
  const speeds = useMemo(() => ({ max_download: cfg.max_download ?? "", max_upload: cfg.max_upload ?? "" }), [row.updated_at]);
  const fairUse = useMemo(
    () => ({ allowance_gb: cfg.allowance_gb ?? "", throttle_max_download: cfg.throttle_max_download ?? "", throttle_max_upload: cfg.throttle_max_upload ?? "" }),
    [row.updated_at],
  );
  const net = row.network;
  // Shown while SUSPENDED unless the policy is known to have it off.
  const trustable = status === "SUSPENDED" && net.state === "suspended" && can("contract") && (policy === null || policy.trust_unblock_days > 0);
  const address = useMemo(() => addressValues(a), [row.updated_at]);
  const changed = (r: Contract) => {
    setRow(r);
    onChange();
  };
  const titleId = `contract-${row.id}`;
  return (
    <section class="card" aria-labelledby={titleId}>
      <div class="page-header">
        <h3 id={titleId}>
          <Link to={`/contracts/${row.id}`}>{`${t("r.contract")} ${row.number}`}</Link>{" "}
          <span class={`badge ${statusClass(status)}`}>{tx(`enum.${status}`)}</span>
          {(net.state === "throttled" || net.state === "trusted") && (
            <>
              {" "}
              <span class="badge warn">{tx(`enum.${net.state}`)}</span>
            </>
          )}
        </h3>
        <div class="actions">
          {network() && (
            <ConfirmButton
              danger
              label={t("session.disconnectAll")}
              message={t("session.disconnectAllConfirm", { number: row.number })}
              onConfirm={async () => {
                setResult((await call<{ items: DisconnectResult[] }>("POST", `/api/contract/${row.id}/disconnect`)).items);
                onChange();
              }}
            />
          )}
          {status === "ACTIVE" && (
            <ConfirmButton
              danger
              label={t("customer.suspend")}
              message={suspendMessage(row.number, policy)}
              onConfirm={async () => changed(await call<Contract>("PUT", `/api/contract/${row.id}`, { body: { ...contractBody(row), contract_status: "SUSPENDED", suspension_date: today() } }))}
            />
          )}
          {trustable && (
            <ConfirmButton
              label={t("customer.trustUnblock")}
              message={t("customer.trustUnblockConfirm", { number: row.number, days: policy?.trust_unblock_days ?? "—", every: policy?.trust_unblock_every_days ?? "—" })}
              onConfirm={async () => {
                const r = await call<Contract>("POST", `/api/contract/${row.id}/trust-unblock`);
                setTrusted(r.network.until);
                changed(r);
              }}
            />
          )}
          {(status === "SUSPENDED" || status === "INACTIVE") && (
            <ConfirmButton label={t("contract.activate")} message={t("contract.activateConfirm", { number: row.number })} onConfirm={async () => changed(await call<Contract>("PUT", `/api/contract/${row.id}/active`))} />
          )}
        </div>
      </div>
      {result && <Notice>{result.length ? result.map(outcomeText).join(" ") : t("session.noneOnline")}</Notice>}
      {trusted && <Notice kind="success">{t("customer.trustUnblockDone", { date: fmtDate(trusted) })}</Notice>}
      <Facts
        items={[
          [t("f.contract_stage"), tx(`enum.${row.contract_stage}`)],
          [t("f.total_value"), fmtMoney(row.total_value)],
          [t("f.username"), cfg.username],
          [t("customer.speed"), cfg.max_download || cfg.max_upload ? `↓ ${cfg.max_download ?? "—"} ↑ ${cfg.max_upload ?? "—"}` : null],
          ...(networkText(row, policy) ? [[t("network.state"), networkText(row, policy)] as [string, string]] : []),
          [t("f.pool_name_ipv4"), cfg.pool_name_ipv4],
          [t("f.ipv4"), cfg.ipv4],
          [t("contract.address"), a ? [a.line1, a.line2, a.district, a.city ? `${a.city.name} / ${a.city.state}` : null].filter(Boolean).join(", ") : null],
          [t("f.start_date"), fmtDate(row.start_date?.slice(0, 10))],
        ]}
      />
      <ContractUsage contractId={row.id} number={row.number} refresh={row.updated_at} />
      <Disclosure summary={t("customer.changeSpeed")}>
        <Form
          fields={SPEED_FIELDS}
          initial={speeds}
          submitLabel={t("customer.applySpeed")}
          onSubmit={async (v) => changed(await call<Contract>("POST", `/api/contract/${row.id}/config`, { body: { max_download: v.max_download || null, max_upload: v.max_upload || null } }))}
        />
      </Disclosure>
      <Disclosure summary={t("customer.fairUse")}>
        <Form
          fields={FAIR_USE_FIELDS}
          initial={fairUse}
          submitLabel={t("customer.applyFairUse")}
          onSubmit={async (v) => {
            const gb = v.allowance_gb === "" || v.allowance_gb === null || v.allowance_gb === undefined ? null : Number(v.allowance_gb);
            const body = { allowance_gb: gb, throttle_max_download: v.throttle_max_download || null, throttle_max_upload: v.throttle_max_upload || null };
            changed(await call<Contract>("POST", `/api/contract/${row.id}/config`, { body }));
          }}
        />
      </Disclosure>
      <Disclosure summary={t("customer.editAddress")}>
        <Form
          fields={ADDRESS_FIELDS}
          initial={address}
          submitLabel={t("common.save")}
          onSubmit={async (v) => changed(await call<Contract>("POST", `/api/contract/${row.id}/address`, { body: addressOf(v) }))}
        />
      </Disclosure>
    </section>
  );
}

const network = () => can("isp", "/api/isp/session");

/** A <details> whose content is built when first opened (a customer with 30 contracts keeps a light page). */
function Disclosure({ summary, children }: { summary: string; children: ComponentChildren }) {
  const [opened, setOpened] = useState(false);
  return (
    <details onToggle={(e) => e.currentTarget.open && setOpened(true)}>
      <summary>{summary}</summary>
      {opened && children}
    </details>
  );
}

function today(): string {
  const d = new Date();
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

function RecentSessions({ sessions }: { sessions: WithContract<RadiusSession>[] }) {
  return (
    <Section title={t("customer.recent")}>
      {sessions.length === 0 ? (
        <p class="empty">{t("customer.noRecent")}</p>
      ) : (
        <div class="table-wrap cards-on-phone">
          <table>
            <thead>
              <tr>
                <th scope="col">{t("f.contract")}</th>
                <th scope="col">{t("f.started_at")}</th>
                <th scope="col">{t("f.stopped_at")}</th>
                <th scope="col">{t("f.session_time")}</th>
                <th scope="col">{t("f.traffic")}</th>
                <th scope="col">{t("f.terminate_cause")}</th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((s) => (
                <tr key={s.id}>
                  <td data-label={t("f.contract")}>
                    <Link to={`/sessions/${s.id}`}>{s.contract.number}</Link>
                  </td>
                  <td data-label={t("f.started_at")}>{fmtDate(s.started_at)}</td>
                  <td data-label={t("f.stopped_at")}>{fmtDate(s.stopped_at)}</td>
                  <td data-label={t("f.session_time")}>{duration(s.session_time)}</td>
                  <td data-label={t("f.traffic")}>{`↓ ${bytes(s.output_bytes)} ↑ ${bytes(s.input_bytes)}`}</td>
                  <td data-label={t("f.terminate_cause")}>{s.terminate_cause ? tx(`cause.${s.terminate_cause}`, s.terminate_cause) : tx(`enum.${s.state}`, s.state)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}

function Rejected({ attempts }: { attempts: WithContract<RadiusAttempt>[] }) {
  return (
    <Section title={t("customer.rejected")}>
      {attempts.length === 0 ? (
        <p class="empty">{t("customer.noRejected")}</p>
      ) : (
        <div class="table-wrap cards-on-phone">
          <table>
            <thead>
              <tr>
                <th scope="col">{t("f.at")}</th>
                <th scope="col">{t("f.contract")}</th>
                <th scope="col">{t("f.ip")}</th>
                <th scope="col">{t("f.reason")}</th>
              </tr>
            </thead>
            <tbody>
              {attempts.map((r) => (
                <tr key={r.id ?? `${r.at}-${r.username}`}>
                  <td data-label={t("f.at")}>{fmtDate(r.at)}</td>
                  <td data-label={t("f.contract")}>
                    <Link to={`/contracts/${r.contract.id}`}>{r.contract.number}</Link>
                  </td>
                  <td data-label={t("f.ip")}>{r.nas_ip}</td>
                  <td data-label={t("f.reason")}>{reasonText(r.reason)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}
