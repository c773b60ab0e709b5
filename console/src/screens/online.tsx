// The online board (/online): who is online now, by customer and contract, with live durations,
// a kick per row and a disconnect of a selection, narrowed by NAS and state (the URL keeps them).
// It follows the realtime socket: a session's start, update or stop (ISP_SESSION_*, told after the
// accounting write commits) reads the board again; the contracts it names follow their events, so
// one suspended, cancelled or reactivated while online is flagged (or no longer) at once.
import { useEffect, useMemo, useState } from "preact/hooks";
import { api, call, type Contract, type DisconnectResult, type Json, type Nas, type Page, type RadiusAttempt, type RadiusSession } from "../api";
import { t, tx } from "../i18n";
import { currentQuery, setQuery } from "../router";
import { ConfirmButton, ErrorNote, Link, Notice, PageHeader, useLoad } from "../ui";
import { LiveDuration } from "./customer";
import { bytes, outcomeText } from "./radius";

/** Contracts already read, by id: a board refresh asks only for the new ones. */
const contracts = new Map<string, Contract>();

type Pop = Json<"isp.listPop">["items"][number];
type Pool = Json<"isp.listPool">["items"][number];

/** The network states a board row can be narrowed to (the contract's, read with it). */
const NETWORK_STATES = ["normal", "throttled", "suspended", "trusted"] as const;

/** Rejections of one user name within REJECT_WINDOW_MIN that need an operator (a wrong password on a router, an attack). */
const REJECT_LIMIT = 5;
const REJECT_WINDOW_MIN = 15;

async function loadBoard(query: Record<string, string>): Promise<{ sessions: RadiusSession[]; total: number; nas: Nas[]; pops: Pop[]; pools: Pool[]; rejected: RadiusAttempt[] }> {
  const since = new Date(Date.now() - REJECT_WINDOW_MIN * 60_000).toISOString();
  const [page, nas, pops, pools, rejected] = await Promise.all([
    call<Page<RadiusSession>>("GET", "/api/isp/session", { query: { ...query, limit: 100, sort: "-started_at" } }),
    call<Page<Nas>>("GET", "/api/isp/nas", { query: { limit: 200, sort: "name" } }),
    call<Page<Pop>>("GET", "/api/isp/pop", { query: { limit: 200, sort: "name" } }),
    call<Page<Pool>>("GET", "/api/isp/pool", { query: { limit: 200, sort: "name" } }),
    call<Page<RadiusAttempt>>("GET", "/api/isp/radius/attempts", { query: { outcome: "reject", from: since, limit: 500, sort: "-at" } }).catch(() => ({ items: [] as RadiusAttempt[] })),
  ]);
  const missing = [...new Set(page.items.map((s) => s.contract_id).filter((id): id is string => !!id && !contracts.has(id)))];
  await Promise.all(missing.map((id) => call<Contract>("GET", `/api/contract/${id}`).then((c) => contracts.set(id, c), () => {})));
  return { sessions: page.items, total: page.total, nas: nas.items, pops: pops.items, pools: pools.items, rejected: rejected.items };
}

/** A burst of session messages (a NAS sending many records) reads the board once. */
const SESSION_SETTLE_MS = 300;

/**
 * Opens the realtime socket: a contract update on the board goes to `contractChanged`, a session's
 * start, update or stop (ISP_SESSION_*) to `sessionsChanged`, as does each (re)open, which may
 * follow missed messages. Opened again 5 s after a drop.
 */
function useBoardEvents(contractChanged: () => void, sessionsChanged: () => void) {
  useEffect(() => {
    let live = true;
    let socket: WebSocket | null = null;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let settle: ReturnType<typeof setTimeout> | undefined;
    const sessions = () => {
      clearTimeout(settle);
      settle = setTimeout(() => live && sessionsChanged(), SESSION_SETTLE_MS);
    };
    const again = () => {
      if (live) retry = setTimeout(open, 5000);
    };
    const open = async () => {
      const { data } = await api.GET("/api/user/socket").catch(() => ({ data: undefined }));
      if (!live) return;
      if (!data) return again();
      // The ticket's own URL names the public address; the console talks to the one it came from.
      socket = new WebSocket(`${location.origin.replace(/^http/, "ws")}/api/socket?ticket=${encodeURIComponent(data.ticket)}`);
      socket.onopen = sessions;
      socket.onmessage = (m) => {
        const event = JSON.parse(String(m.data)) as { type: string; data: Contract };
        if (event.type.startsWith("ISP_SESSION_")) return sessions();
        if (!contracts.has(event.data?.id)) return;
        // Fair use and trust unblock change the contract's network state; their data is the contract too.
        if (event.type === "CONTRACT_AFTER_UPDATE" || event.type === "ISP_AFTER_THROTTLE" || event.type === "ISP_AFTER_RESTORE" || event.type === "ISP_AFTER_TRUST_UNBLOCK") contracts.set(event.data.id, event.data);
        else if (event.type === "CONTRACT_AFTER_DELETE") contracts.delete(event.data.id);
        else return;
        contractChanged();
      };
      // 4401: the session ended (the console goes back to its login); anything else: open again.
      socket.onclose = (e) => e.code !== 4401 && again();
    };
    void open();
    return () => {
      live = false;
      clearTimeout(retry);
      clearTimeout(settle);
      socket?.close();
    };
  }, []);
}

interface Warning {
  key: string;
  text: string;
  to: string;
  link: string;
}

/**
 * What needs an operator, from what the board read: a cancelled or suspended contract that is
 * online, a user name rejected again and again lately, a NAS gone quiet. Each links to its record.
 */
function warningsOf(sessions: RadiusSession[], nas: Nas[], rejected: RadiusAttempt[]): Warning[] {
  const out: Warning[] = [];
  const seen = new Set<string>();
  for (const s of sessions) {
    const c = s.contract_id ? contracts.get(s.contract_id) : undefined;
    if (!c || seen.has(c.id) || (c.contract_status !== "CANCELLED" && c.contract_status !== "SUSPENDED")) continue;
    seen.add(c.id);
    out.push({ key: `c-${c.id}`, text: t("online.warnContract", { number: c.number, status: tx(`enum.${c.contract_status}`), username: s.username }), to: `/contracts/${c.id}`, link: t("online.warnOpenContract") });
  }
  const counts = new Map<string, number>();
  for (const a of rejected) counts.set(a.username, (counts.get(a.username) ?? 0) + 1);
  for (const [username, n] of counts) {
    if (n < REJECT_LIMIT) continue;
    out.push({ key: `r-${username}`, text: t("online.warnRejected", { username, n, minutes: REJECT_WINDOW_MIN }), to: `/radius-attempts?q=${encodeURIComponent(username)}&outcome=reject`, link: t("online.warnOpenAttempts") });
  }
  for (const n of nas) {
    if (n.health !== "quiet") continue;
    out.push({ key: `n-${n.id}`, text: t("online.warnQuiet", { name: n.name }), to: `/nas/${n.id}`, link: t("online.warnOpenNas") });
  }
  return out;
}

function BoardWarnings({ warnings }: { warnings: Warning[] }) {
  if (warnings.length === 0) return null;
  return (
    <section class="card warnings" aria-labelledby="online-warnings">
      <h2 id="online-warnings">{t("online.warnings")}</h2>
      <ul>
        {warnings.map((w) => (
          <li key={w.key}>
            {w.text} <Link to={w.to}>{w.link}</Link>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function OnlineBoard() {
  const q = currentQuery();
  const state = q.get("state") ?? "online";
  const nasId = q.get("nas_id") ?? "";
  const popId = q.get("pop_id") ?? "";
  const poolId = q.get("pool_id") ?? "";
  const network = q.get("network") ?? "";
  const query = useMemo(() => ({ state, ...(nasId ? { nas_id: nasId } : {}), ...(popId ? { pop_id: popId } : {}), ...(poolId ? { pool_id: poolId } : {}) }), [state, nasId, popId, poolId]);
  const board = useLoad(() => loadBoard(query), [JSON.stringify(query)]);
  const [, redraw] = useState(0);
  useBoardEvents(() => redraw((n) => n + 1), board.reload);
  const [chosen, setSelected] = useState<Set<string>>(new Set());
  const [results, setResults] = useState<string[] | null>(null);
  // The network state is the contract's: narrowed here, over the sessions read.
  const sessions = (board.data?.sessions ?? []).filter((s) => !network || (s.contract_id ? contracts.get(s.contract_id)?.network.state === network : false));
  const kickable = sessions.filter((s) => s.state !== "closed");
  // A session that left the board meanwhile is no longer selected.
  const selected = new Set(kickable.filter((s) => chosen.has(s.id)).map((s) => s.id));
  const toggle = (id: string, on: boolean) =>
    setSelected((old) => {
      const next = new Set(old);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const kick = async (ids: string[]) => {
    const lines: string[] = [];
    for (const id of ids) {
      const s = sessions.find((x) => x.id === id);
      try {
        lines.push(`${s?.username ?? id}: ${outcomeText(await call<DisconnectResult>("POST", `/api/isp/session/${id}/disconnect`))}`);
      } catch {
        lines.push(`${s?.username ?? id}: ${t("online.kickFailed")}`);
      }
    }
    setResults(lines);
    setSelected(new Set());
    board.reload();
  };
  return (
    <>
      <PageHeader title={t("nav.online")}>
        <button type="button" onClick={() => board.reload()}>
          {t("online.refresh")}
        </button>
      </PageHeader>
      <form class="toolbar" onSubmit={(e) => e.preventDefault()}>
        <span class="filter">
          <label for="online-state">{t("f.state")}</label>
          <select id="online-state" value={state} onChange={(e) => setQuery({ state: e.currentTarget.value === "online" ? null : e.currentTarget.value })}>
            {["online", "stale"].map((s) => (
              <option key={s} value={s}>
                {tx(`enum.${s}`)}
              </option>
            ))}
          </select>
        </span>
        <span class="filter">
          <label for="online-nas">{t("f.nas")}</label>
          <select id="online-nas" value={nasId} onChange={(e) => setQuery({ nas_id: e.currentTarget.value })}>
            <option value="">{t("list.all")}</option>
            {(board.data?.nas ?? []).map((n) => (
              <option key={n.id} value={n.id}>
                {n.name}
              </option>
            ))}
          </select>
        </span>
        <span class="filter">
          <label for="online-pop">{t("f.pop")}</label>
          <select id="online-pop" value={popId} onChange={(e) => setQuery({ pop_id: e.currentTarget.value })}>
            <option value="">{t("list.all")}</option>
            {(board.data?.pops ?? []).map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </span>
        <span class="filter">
          <label for="online-pool">{t("r.pool")}</label>
          <select id="online-pool" value={poolId} onChange={(e) => setQuery({ pool_id: e.currentTarget.value })}>
            <option value="">{t("list.all")}</option>
            {(board.data?.pools ?? []).map((p) => (
              <option key={p.id} value={p.id}>
                {`${p.name} (${p.cidr})`}
              </option>
            ))}
          </select>
        </span>
        <span class="filter">
          <label for="online-network">{t("network.state")}</label>
          <select id="online-network" value={network} onChange={(e) => setQuery({ network: e.currentTarget.value })}>
            <option value="">{t("list.all")}</option>
            {NETWORK_STATES.map((n) => (
              <option key={n} value={n}>
                {tx(`enum.${n}`)}
              </option>
            ))}
          </select>
        </span>
        {selected.size > 0 && (
          <ConfirmButton
            danger
            label={t("online.kickSelected", { n: selected.size })}
            message={t("online.kickSelectedConfirm", { n: selected.size })}
            onConfirm={() => kick([...selected])}
          />
        )}
      </form>
      {results && <Notice>{results.join(" · ")}</Notice>}
      {board.data && <BoardWarnings warnings={warningsOf(board.data.sessions, board.data.nas, board.data.rejected)} />}
      <ErrorNote problem={board.error} />
      {board.data && (
        <>
          <p role="status">
            {t("online.count", { n: network ? sessions.length : board.data.total })} <span class="hint">{t("online.live")}</span>
          </p>
          {sessions.length === 0 ? (
            <p class="empty">{t("online.none")}</p>
          ) : (
            <div class="table-wrap cards-on-phone" aria-busy={board.loading}>
              <table>
                <thead>
                  <tr>
                    <th scope="col">
                      <input
                        type="checkbox"
                        aria-label={t("online.selectAll")}
                        checked={kickable.length > 0 && kickable.every((s) => selected.has(s.id))}
                        onChange={(e) => setSelected(e.currentTarget.checked ? new Set(kickable.map((s) => s.id)) : new Set())}
                      />
                    </th>
                    <th scope="col">{t("f.customer")}</th>
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
                  {sessions.map((s) => {
                    const c = s.contract_id ? contracts.get(s.contract_id) : undefined;
                    return (
                      <tr key={s.id}>
                        <td data-label={t("online.select")}>
                          <input type="checkbox" aria-label={t("online.selectOne", { username: s.username })} checked={selected.has(s.id)} onChange={(e) => toggle(s.id, e.currentTarget.checked)} />
                        </td>
                        <td data-label={t("f.customer")}>{c?.customer ? <Link to={`/customers/${c.customer.id}`}>{c.customer.name}</Link> : "—"}</td>
                        <td data-label={t("f.contract")}>
                          {c ? <Link to={`/contracts/${c.id}`}>{c.number}</Link> : "—"}
                          {c && c.contract_status !== "ACTIVE" && <span class="badge bad">{tx(`enum.${c.contract_status}`)}</span>}
                          {c && (c.network.state === "throttled" || c.network.state === "trusted") && <span class="badge warn">{tx(`enum.${c.network.state}`)}</span>}
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
                          <ConfirmButton danger label={t("session.disconnect")} message={t("session.disconnectConfirm", { username: s.username, nas: s.nas_name ?? "" })} onConfirm={() => kick([s.id])} />
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </>
  );
}
