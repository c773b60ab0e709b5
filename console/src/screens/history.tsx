// The history of changes (GET /api/history): every write by any route, key or job, with its field
// changes before → after. A global list with filters kept in the URL, and one record's changes on
// the generic record screens.
import type { ComponentChildren } from "preact";
import { useEffect, useId, useState } from "preact/hooks";
import { api, call, problemOf } from "../api";
import type { components, operations } from "../api.gen";
import { fmtDate, fmtMoney, lang, t, tx } from "../i18n";
import { eventText } from "../labels";
import { currentQuery, location$, setQuery } from "../router";
import { ErrorNote, Link, PageHeader, Section, useLoad } from "../ui";
import { TARGETS } from "./history-targets";
import { jobName } from "./jobs";
import { ot, otx } from "./ops-texts";

type Change = components["schemas"]["Change"];
type HistoryQuery = NonNullable<operations["history.list"]["parameters"]["query"]>;

const ACTIONS = ["create", "update", "delete", "status", "config", "items", "flags", "address", "link", "unlink", "key", "secret", "classifications", "attributes", "actions", "member", "group", "grant", "service", "throttle", "restore", "suspend", "trust-unblock", "trust-end"];

export function typeText(type: string): string {
  const d = TARGETS[type];
  return d ? tx(d.label, otx(d.label)) : type;
}

export function actionLabel(action: string): string {
  return otx(`history.action.${action}`, action);
}

function actorText(c: Change): ComponentChildren {
  const job = /^system:(.+)$/.exec(c.actor);
  if (job) return ot("history.byJob", { job: jobName(job[1]) });
  if (c.actor_user_id) return <Link to={`/users/${c.actor_user_id}`}>{c.actor}</Link>;
  if (c.actor_app_id) return <Link to={`/external-apps/${c.actor_app_id}`}>{`${c.actor} (${t("r.externalApp")})`}</Link>;
  return c.actor;
}

/** A dotted field (config.max_upload, items.0.quantity) in words where the console knows them. */
function fieldText(field: string): ComponentChildren {
  const parts = field.split(".").map((p): ComponentChildren => {
    if (/^\d+$/.test(p)) return `#${Number(p) + 1}`;
    // A reference (layout_id) by the record it names (Layout).
    const word = tx(`f.${p}`, "") || tx(`f.${p.replace(/_id$/, "")}`, "");
    return word || <code>{p}</code>;
  });
  return parts.flatMap((p, i) => (i === 0 ? [p] : [" › ", p]));
}

/** Fields holding money (a contract's value, a product's price, an item's), shown as money. */
const MONEY = new Set(["total_value", "price", "unit_price", "total"]);

function valueText(v: unknown, names: Map<string, string>, field = ""): ComponentChildren {
  if (v === null || v === undefined || v === "") return "—";
  if (typeof v === "boolean") return v ? t("common.yes") : t("common.no");
  if (typeof v === "number" && MONEY.has(field.split(".").pop()!)) return fmtMoney(v);
  if (typeof v === "number") return v.toLocaleString(lang.value, { useGrouping: false, maximumFractionDigits: 6 });
  // Names (a product's classifications, a contract's flags) as a list of words; a webhook's event
  // groups by their labels.
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) {
    const words = field.split(".").pop() === "groups" ? v.map(eventText) : v;
    return words.length ? words.join(", ") : "—";
  }
  if (typeof v === "string") {
    if (/^\d{4}-\d{2}-\d{2}(T|$)/.test(v)) return fmtDate(v);
    // Codes with a word of their own (ACTIVE, dynamic).
    if (/^[A-Za-z_]+$/.test(v)) return tx(`enum.${v}`, v);
    // Ids and templates ({{contract.config.max_upload}}) are code, not words.
    if (UUID.test(v) && names.has(v)) return names.get(v);
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-/.test(v) || v.includes("{{")) return <code>{v}</code>;
    return v;
  }
  return <code>{JSON.stringify(v)}</code>;
}

const empty = (v: unknown) => v === null || v === undefined || v === "" || (Array.isArray(v) && v.length === 0);

/**
 * The field changes: before → after; a created record its values, a deleted one what it had
 * (empty fields and the record's own id left out).
 */
export function ChangeList({ changes, action, names }: { changes: Change["changes"]; action: string; names: Map<string, string> }) {
  const side = action === "create" ? "after" : action === "delete" ? "before" : null;
  const shown = changes.filter((f) => f.field !== "id" && !(side && empty(f[side])));
  if (shown.length === 0) return <>—</>;
  return (
    <ul class="changes">
      {shown.map((f) => (
        <li key={f.field}>
          <span class="change-field">{fieldText(f.field)}</span>
          {": "}
          {side ? (
            valueText(f[side], names, f.field)
          ) : (
            <>
              <span class="before">{valueText(f.before, names, f.field)}</span> <span aria-label={ot("history.becomes")}>→</span> <span class="after">{valueText(f.after, names, f.field)}</span>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

/** A record's name from its changes (create and delete carry it), else from the record itself. */
function nameFromChanges(c: Change): string | null {
  for (const key of ["name", "number", "title", "login", "company_name", "identity", "range"]) {
    const f = c.changes.find((x) => x.field === key);
    const v = f ? (f.after ?? f.before) : null;
    if (typeof v === "string" && v) return v;
  }
  return null;
}

/** Reference fields (a change's last segment) and the record type they name. */
const REF_TYPES: Record<string, string> = {
  customer_id: "person",
  billing_customer_id: "person",
  agent_id: "person",
  city_id: "city",
  layout_id: "layout",
  pop_id: "pop",
  manufacturer_id: "manufacturer",
  nas_id: "nas",
  product_id: "product",
  campaign_id: "campaign",
  category_id: "category",
  logo_id: "logo",
  service_id: "service",
  feature_id: "feature",
  server_id: "server",
  external_app_id: "externalapp",
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export async function loadHistory(query: HistoryQuery, withNames = true) {
  const { data, error, response } = await api.GET("/api/history", { params: { query } });
  if (!data) throw problemOf(error, response.status);
  // Names of the records the page shows and of those their changes refer to: from the changes,
  // else one read per record (a deleted one has none).
  const names = new Map<string, string>();
  for (const c of data.items) {
    const n = nameFromChanges(c);
    if (n && !names.has(c.target_id)) names.set(c.target_id, n);
  }
  const wanted = new Map<string, string>();
  for (const c of data.items) {
    if (withNames && !names.has(c.target_id) && TARGETS[c.target_type]?.api) wanted.set(c.target_id, c.target_type);
    for (const f of c.changes) {
      const type = REF_TYPES[f.field.split(".").pop()!];
      if (!type) continue;
      for (const v of [f.before, f.after]) if (typeof v === "string" && UUID.test(v) && !names.has(v)) wanted.set(v, type);
    }
  }
  await Promise.all(
    [...wanted].map(async ([id, type]) => {
      try {
        const r = await call<{ name?: string; number?: string; title?: string | null; login?: string; company_name?: string; identity?: string }>("GET", `${TARGETS[type].api}/${id}`);
        const n = r.name ?? r.number ?? r.title ?? r.login ?? r.company_name ?? r.identity;
        if (n) names.set(id, n);
      } catch {
        // Deleted, or not readable by this operator: shown by its type, or its id, alone.
      }
    }),
  );
  return { ...data, names };
}

function TargetCell({ c, name, deleted }: { c: Change; name: string | undefined; deleted: boolean }) {
  const d = TARGETS[c.target_type];
  const text = `${typeText(c.target_type)}${name ? `: ${name}` : ""}`;
  if (!d?.screen || deleted) return <>{text}</>;
  const to = d.api ? `${d.screen}/${c.target_id}` : d.screen;
  return <Link to={to}>{text}</Link>;
}

/** Start of a local day / end of a local day as instants with an offset. */
function dayBound(day: string, end: boolean): string {
  const [y, m, d] = day.split("-").map(Number);
  return new Date(y, m - 1, d + (end ? 1 : 0)).toISOString();
}

export function HistoryTable({ data, compact }: { data: Awaited<ReturnType<typeof loadHistory>>; compact?: boolean }) {
  const deleted = new Set(data.items.filter((c) => c.action === "delete").map((c) => c.target_id));
  return (
    <div class="table-wrap cards-on-phone">
      <table>
        <thead>
          <tr>
            <th scope="col">{t("f.at")}</th>
            <th scope="col">{t("f.actor")}</th>
            {!compact && <th scope="col">{ot("history.record")}</th>}
            <th scope="col">{t("f.action")}</th>
            <th scope="col">{ot("history.changes")}</th>
          </tr>
        </thead>
        <tbody>
          {data.items.map((c) => (
            <tr key={c.id}>
              <td data-label={t("f.at")}>{fmtDate(c.at)}</td>
              <td data-label={t("f.actor")}>{actorText(c)}</td>
              {!compact && (
                <td data-label={ot("history.record")}>
                  <TargetCell c={c} name={data.names.get(c.target_id)} deleted={deleted.has(c.target_id)} />
                </td>
              )}
              <td data-label={t("f.action")}>{actionLabel(c.action)}</td>
              <td data-label={ot("history.changes")}>
                <ChangeList changes={c.changes} action={c.action} names={data.names} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {data.items.length === 0 && <p class="empty">{ot("history.none")}</p>}
    </div>
  );
}

function Pager({ page, limit, total, onPage }: { page: number; limit: number; total: number; onPage: (p: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / limit));
  if (total === 0) return null;
  return (
    <nav class="pager" aria-label={t("list.pages")}>
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        {t("list.previous")}
      </button>
      <span>{t("list.pageOf", { page, pages, total })}</span>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        {t("list.next")}
      </button>
    </nav>
  );
}

async function loadUsers() {
  const { data } = await api.GET("/api/user", { params: { query: { limit: 500, sort: "name" } } });
  return data?.items ?? [];
}

export function HistoryScreen() {
  void location$.value;
  const q = currentQuery();
  const page = Number(q.get("page") ?? "1") || 1;
  const filter = { target_type: q.get("target_type") ?? "", action: q.get("action") ?? "", actor_user_id: q.get("actor_user_id") ?? "", from: q.get("from") ?? "", to: q.get("to") ?? "" };
  const query: HistoryQuery = { page, limit: 25 };
  if (filter.target_type) query.target_type = filter.target_type;
  if (filter.action) query.action = filter.action;
  if (filter.actor_user_id) query.actor_user_id = filter.actor_user_id;
  if (filter.from) query.from = dayBound(filter.from, false);
  if (filter.to) query.to = dayBound(filter.to, true);
  const list = useLoad(() => loadHistory(query), [JSON.stringify(query)]);
  const users = useLoad(loadUsers, []);
  const [draft, setDraft] = useState(filter);
  useEffect(() => setDraft(filter), [JSON.stringify(filter)]);
  const id = useId();
  const apply = (e: Event) => {
    e.preventDefault();
    setQuery({ ...draft, page: null });
  };
  const set = (k: keyof typeof filter) => (e: { currentTarget: { value: string } }) => setDraft({ ...draft, [k]: e.currentTarget.value });
  return (
    <>
      <PageHeader title={t("nav.history")} />
      <form class="toolbar history-filters" role="search" aria-label={ot("history.filters")} onSubmit={apply}>
        <span class="filter">
          <label for={`${id}-type`}>{ot("history.type")}</label>
          <select id={`${id}-type`} value={draft.target_type} onChange={set("target_type")}>
            <option value="">{t("list.all")}</option>
            {Object.keys(TARGETS)
              .map((k) => [k, typeText(k)] as const)
              .sort((a, b) => a[1].localeCompare(b[1], lang.value))
              .map(([k, text]) => (
                <option key={k} value={k}>
                  {text}
                </option>
              ))}
          </select>
        </span>
        <span class="filter">
          <label for={`${id}-action`}>{t("f.action")}</label>
          <select id={`${id}-action`} value={draft.action} onChange={set("action")}>
            <option value="">{t("list.all")}</option>
            {ACTIONS.map((a) => (
              <option key={a} value={a}>
                {actionLabel(a)}
              </option>
            ))}
          </select>
        </span>
        <span class="filter">
          <label for={`${id}-actor`}>{t("f.actor")}</label>
          <select id={`${id}-actor`} value={draft.actor_user_id} onChange={set("actor_user_id")}>
            <option value="">{t("list.all")}</option>
            {(users.data ?? []).map((u) => (
              <option key={u.id} value={u.id}>
                {u.name} ({u.login})
              </option>
            ))}
          </select>
        </span>
        <span class="filter">
          <label for={`${id}-from`}>{ot("history.from")}</label>
          <input id={`${id}-from`} type="date" value={draft.from} onInput={set("from")} />
        </span>
        <span class="filter">
          <label for={`${id}-to`}>{ot("history.to")}</label>
          <input id={`${id}-to`} type="date" value={draft.to} onInput={set("to")} />
        </span>
        <button type="submit">{ot("history.apply")}</button>
      </form>
      <ErrorNote problem={list.error} />
      <section aria-label={t("nav.history")} aria-busy={list.loading}>
        {list.data && <HistoryTable data={list.data} />}
        {list.data && <Pager page={list.data.page} limit={list.data.limit} total={list.data.total} onPage={(p) => setQuery({ page: String(p) })} />}
      </section>
    </>
  );
}

/** One record's changes, newest first (the record screens' History section). */
export function RecordHistory({ type, id, refresh }: { type: string; id: string; refresh?: unknown }) {
  const [page, setPage] = useState(1);
  const list = useLoad(() => loadHistory({ target_type: type, target_id: id, page, limit: 10 }, false), [type, id, page, refresh]);
  return (
    <Section title={ot("history.ofRecord")}>
      <ErrorNote problem={list.error} />
      <div aria-busy={list.loading}>
        {list.data && <HistoryTable data={list.data} compact />}
        {list.data && <Pager page={list.data.page} limit={list.data.limit} total={list.data.total} onPage={setPage} />}
      </div>
    </Section>
  );
}
