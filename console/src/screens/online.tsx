// The online board (/online): who is online now, by customer and contract, with live durations,
// a kick per row and a disconnect of a selection, narrowed by NAS and state (the URL keeps them).
// It follows the sessions live: sessions are not outbox events (the realtime socket does not carry
// them), so a one-row probe every few seconds says whether anything changed, and only then is the
// board read again. The contracts it names follow the realtime socket: one suspended, cancelled or
// reactivated while online is flagged (or no longer) at once.
import { useEffect, useMemo, useState } from "preact/hooks";
import { api, call, type Contract, type DisconnectResult, type Nas, type Page, type RadiusSession } from "../api";
import { t, tx } from "../i18n";
import { currentQuery, setQuery } from "../router";
import { ConfirmButton, ErrorNote, Link, Notice, PageHeader, useLoad } from "../ui";
import { LiveDuration } from "./customer";
import { bytes, outcomeText } from "./radius";

/** Contracts already read, by id: a board refresh asks only for the new ones. */
const contracts = new Map<string, Contract>();

/** How often the board asks whether its sessions changed (while the tab is shown). */
const PROBE_MS = 2000;

/**
 * What changes whenever a session under the filter does: the filter's count (a Start, a Stop, a
 * session going stale) and the session last written (every accounting record sets updated_at).
 */
async function probe(query: Record<string, string>): Promise<string> {
  const page = await call<Page<RadiusSession>>("GET", "/api/isp/session", { query: { ...query, limit: 1, sort: "-updated_at" } });
  const last = page.items[0];
  return `${page.total} ${last?.id ?? ""} ${last?.updated_at ?? ""}`;
}

async function loadBoard(query: Record<string, string>): Promise<{ sessions: RadiusSession[]; total: number; nas: Nas[]; mark: string }> {
  // The mark is read before the list: a change in between shows in the list and the next probe
  // reads the board once more, rather than the board missing it.
  const mark = await probe(query);
  const [page, nas] = await Promise.all([
    call<Page<RadiusSession>>("GET", "/api/isp/session", { query: { ...query, limit: 100, sort: "-started_at" } }),
    call<Page<Nas>>("GET", "/api/isp/nas", { query: { limit: 200, sort: "name" } }),
  ]);
  const missing = [...new Set(page.items.map((s) => s.contract_id).filter((id): id is string => !!id && !contracts.has(id)))];
  await Promise.all(missing.map((id) => call<Contract>("GET", `/api/contract/${id}`).then((c) => contracts.set(id, c), () => {})));
  return { sessions: page.items, total: page.total, nas: nas.items, mark };
}

/** Calls `changed` when the probe no longer reads `mark`; quiet while the tab is hidden or a read is on. */
function useSessionChanges(query: Record<string, string>, mark: string | undefined, busy: boolean, changed: () => void) {
  useEffect(() => {
    if (mark === undefined || busy) return;
    let live = true;
    let timer: ReturnType<typeof setTimeout>;
    const tick = async () => {
      if (document.visibilityState === "visible") {
        const now = await probe(query).catch(() => mark);
        if (!live) return;
        if (now !== mark) return changed();
      }
      timer = setTimeout(tick, PROBE_MS);
    };
    timer = setTimeout(tick, PROBE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [mark, busy, JSON.stringify(query)]);
}

/** Opens the realtime socket and hands each contract update to `changed`; opened again after a drop. */
function useContractEvents(changed: () => void) {
  useEffect(() => {
    let live = true;
    let socket: WebSocket | null = null;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const again = () => {
      if (live) retry = setTimeout(open, 5000);
    };
    const open = async () => {
      const { data } = await api.GET("/api/user/socket").catch(() => ({ data: undefined }));
      if (!live) return;
      if (!data) return again();
      // The ticket's own URL names the public address; the console talks to the one it came from.
      socket = new WebSocket(`${location.origin.replace(/^http/, "ws")}/api/socket?ticket=${encodeURIComponent(data.ticket)}`);
      socket.onmessage = (m) => {
        const event = JSON.parse(String(m.data)) as { type: string; data: Contract };
        if (!contracts.has(event.data?.id)) return;
        // Fair use and trust unblock change the contract's network state; their data is the contract too.
        if (event.type === "CONTRACT_AFTER_UPDATE" || event.type === "ISP_AFTER_THROTTLE" || event.type === "ISP_AFTER_RESTORE" || event.type === "ISP_AFTER_TRUST_UNBLOCK") contracts.set(event.data.id, event.data);
        else if (event.type === "CONTRACT_AFTER_DELETE") contracts.delete(event.data.id);
        else return;
        changed();
      };
      // 4401: the session ended (the console goes back to its login); anything else: open again.
      socket.onclose = (e) => e.code !== 4401 && again();
    };
    void open();
    return () => {
      live = false;
      clearTimeout(retry);
      socket?.close();
    };
  }, []);
}

export function OnlineBoard() {
  const q = currentQuery();
  const state = q.get("state") ?? "online";
  const nasId = q.get("nas_id") ?? "";
  const query = useMemo(() => ({ state, ...(nasId ? { nas_id: nasId } : {}) }), [state, nasId]);
  const board = useLoad(() => loadBoard(query), [JSON.stringify(query)]);
  useSessionChanges(query, board.data?.mark, board.loading, board.reload);
  const [, redraw] = useState(0);
  useContractEvents(() => redraw((n) => n + 1));
  const [chosen, setSelected] = useState<Set<string>>(new Set());
  const [results, setResults] = useState<string[] | null>(null);
  const sessions = board.data?.sessions ?? [];
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
      <ErrorNote problem={board.error} />
      {board.data && (
        <>
          <p role="status">
            {t("online.count", { n: board.data.total })} <span class="hint">{t("online.live")}</span>
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
