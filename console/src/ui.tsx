// Shared pieces of every screen: lists that keep their state in the URL, forms that show the
// server's field errors, confirmations, reference pickers, charts with a table beside them.
import type { ComponentChildren, JSX } from "preact";
import { useEffect, useRef, useState, useId } from "preact/hooks";
import { asText, call, fetchBlob, type ListItemOf, type Page, type Problem, type Row } from "./api";
import { t, tx, fmtDate, type Key } from "./i18n";
import { fieldMessage, problemText, unplacedMessage } from "./messages";

export { problemText };
import { BASE, currentQuery, setQuery, location$ } from "./router";

export function href(path: string): string {
  return `${BASE}${path}`;
}

export function Link(props: { to: string; children: ComponentChildren; class?: string; "aria-current"?: "page" | undefined }) {
  return (
    <a href={href(props.to)} class={props.class} aria-current={props["aria-current"]}>
      {props.children}
    </a>
  );
}

export function ErrorNote({ problem }: { problem: Problem | null | undefined }) {
  if (!problem) return null;
  return (
    <p class="error" role="alert">
      {problemText(problem)}
    </p>
  );
}

export function Notice({ children, kind = "info" }: { children: ComponentChildren; kind?: "info" | "success" | "warning" }) {
  return (
    <p class={`notice ${kind}`} role="status">
      {children}
    </p>
  );
}

export function StatusBadge({ on, onText, offText }: { on: boolean; onText?: string; offText?: string }) {
  return <span class={`badge ${on ? "ok" : "off"}`}>{on ? (onText ?? t("common.active")) : (offText ?? t("common.inactive"))}</span>;
}

export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · corpadmin`;
  }, [title]);
  return (
    <div class="page-header">
      <h1 tabIndex={-1} id="page-title">
        {title}
      </h1>
      <div class="actions">{children}</div>
    </div>
  );
}

/** Loads something whenever its key changes; reload() asks again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | null; error: Problem | null; loading: boolean; reload: () => void; set: (d: T) => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<Problem | null>(null);
  const [loading, setLoading] = useState(true);
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    setLoading(true);
    load().then(
      (d) => {
        if (!live) return;
        setData(d);
        setError(null);
        setLoading(false);
      },
      (e: Problem) => {
        if (!live) return;
        setError(e);
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, n]);
  return { data, error, loading, reload: () => setN((x) => x + 1), set: setData };
}

/** Saves what an authenticated GET answers (CSV exports, images) as a file. */
export async function download(path: string, name: string): Promise<void> {
  const url = URL.createObjectURL(await fetchBlob(path));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// ---------- Lists ----------

/** A list column: `key` a field of the list's rows (R, from the generated client where known). */
export interface Column<R = Row> {
  key: Extract<keyof R, string>;
  label: Key;
  sort?: boolean;
  render?: (row: R) => ComponentChildren;
}

export interface Filter {
  name: string;
  label: Key;
  /** [value, text or dictionary key] */
  options: [string, string][];
}

export function cell<R>(row: R, c: Column<R>): ComponentChildren {
  if (c.render) return c.render(row);
  const v: unknown = row[c.key];
  if (typeof v === "boolean") return c.key === "status" ? <StatusBadge on={v} /> : v ? t("common.yes") : t("common.no");
  if (v === null || v === undefined || v === "") return "—";
  if (typeof v === "string" && /^\d{4}-\d{2}-\d{2}T/.test(v)) return fmtDate(v);
  if (typeof v === "string" && /^[A-Z_]+$/.test(v)) return tx(`enum.${v}`, v);
  return String(v);
}

/** A record's id (every list row has one; a generic row type cannot say so). */
function idOf(row: unknown): string | undefined {
  const id = row && typeof row === "object" && "id" in row ? row.id : undefined;
  return typeof id === "string" ? id : undefined;
}

/** A list row's key: its id, else its place. */
function rowKey(row: unknown, index: number): string {
  return idOf(row) ?? String(index);
}

/** The page sizes a list offers; the choice is kept in the URL (?limit=). */
const PAGE_SIZES = ["10", "25", "50", "100"];

/**
 * A server-paged list: page, limit, q, sort and filters come from the URL and go to the API as
 * they are, so a link keeps them. `rowHref` makes the first column a link.
 */
export function ListView<const P extends string>(props: {
  path: P;
  columns: Column<ListItemOf<P>>[];
  filters?: Filter[];
  rowHref?: (row: ListItemOf<P>) => string;
  search?: boolean;
  label: string;
  fixedQuery?: Record<string, string>;
  pageParam?: string;
  /** Changing it loads the page again. */
  refresh?: number;
}) {
  const loc = location$.value;
  const q = currentQuery();
  const prefix = props.pageParam ?? "";
  const page = Number(q.get(`${prefix}page`) ?? "1") || 1;
  const sort = q.get(`${prefix}sort`) ?? "";
  const search = q.get(`${prefix}q`) ?? "";
  const limitParam = q.get(`${prefix}limit`) ?? "";
  const limit = PAGE_SIZES.includes(limitParam) ? limitParam : "25";
  const query: Record<string, string> = { page: String(page), limit, ...(props.fixedQuery ?? {}) };
  if (sort) query.sort = sort;
  if (search) query.q = search;
  for (const f of props.filters ?? []) {
    const v = q.get(`${prefix}${f.name}`);
    if (v) query[f.name] = v;
  }
  const key = JSON.stringify(query) + props.path + (props.refresh ?? 0);
  const narrowed = search !== "" || (props.filters ?? []).some((f) => q.get(`${prefix}${f.name}`));
  const { data, error, loading } = useLoad(() => call<Page<ListItemOf<P>>>("GET", props.path, { query }), [key]);
  const [draft, setDraft] = useState(search);
  useEffect(() => setDraft(search), [search, loc]);
  const pages = data ? Math.max(1, Math.ceil(data.total / data.limit)) : 1;
  const searchId = useId();
  const [csvProblem, setCsvProblem] = useState<Problem | null>(null);
  // The same filter and sort as CSV, every page (the list convention's text/csv answer).
  const exportCsv = () => {
    const { page: _page, limit: _limit, ...filters } = query;
    const qs = new URLSearchParams({ ...filters, format: "csv" }).toString();
    download(`${props.path}?${qs}`, `${props.path.replace(/^\/api\//, "").replace(/\//g, "-")}.csv`).then(() => setCsvProblem(null), (e) => setCsvProblem(e as Problem));
  };

  const sortBy = (k: string) => setQuery({ [`${prefix}sort`]: sort === k ? `-${k}` : k, [`${prefix}page`]: null });
  return (
    <section class="list" aria-label={props.label}>
      {(props.search !== false || props.filters?.length) && (
        <form
          class="toolbar"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            setQuery({ [`${prefix}q`]: draft, [`${prefix}page`]: null });
          }}
        >
          {props.search !== false && (
            <>
              <label for={searchId}>{t("list.search")}</label>
              <input id={searchId} type="search" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
              <button type="submit">{t("list.searchButton")}</button>
            </>
          )}
          {(props.filters ?? []).map((f) => (
            <FilterSelect key={f.name} filter={f} value={q.get(`${prefix}${f.name}`) ?? ""} onChange={(v) => setQuery({ [`${prefix}${f.name}`]: v, [`${prefix}page`]: null })} />
          ))}
        </form>
      )}
      {error ? (
        <ErrorNote problem={error} />
      ) : (
        <div class="table-wrap cards-on-phone" aria-busy={loading}>
          <table>
            <thead>
              <tr>
                {props.columns.map((c) => {
                  const dir = sort === c.key ? "ascending" : sort === `-${c.key}` ? "descending" : undefined;
                  return (
                    <th key={c.key} scope="col" aria-sort={dir}>
                      {c.sort === false ? (
                        t(c.label)
                      ) : (
                        <button type="button" class="sort" onClick={() => sortBy(c.key)}>
                          {t(c.label)}
                          <span aria-hidden="true">{dir === "ascending" ? " ▲" : dir === "descending" ? " ▼" : ""}</span>
                        </button>
                      )}
                    </th>
                  );
                })}
              </tr>
            </thead>
            <tbody>
              {data?.items.map((row, n) => (
                <tr key={rowKey(row, n)}>
                  {props.columns.map((c, i) => (
                    <td key={c.key} data-label={t(c.label)}>{i === 0 && props.rowHref ? <Link to={props.rowHref(row)}>{cell(row, c)}</Link> : cell(row, c)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
          {data && data.items.length === 0 && <p class="empty">{narrowed ? t("list.noMatch") : t("list.empty")}</p>}
        </div>
      )}
      {data && data.total > 0 && (
        <nav class="pager" aria-label={t("list.pages")}>
          <button type="button" disabled={page <= 1} onClick={() => setQuery({ [`${prefix}page`]: String(page - 1) })}>
            {t("list.previous")}
          </button>
          {/* The page of the rows shown (the URL moves first; the label follows the data). */}
          <span>{t("list.pageOf", { page: data.page, pages, total: data.total })}</span>
          <button type="button" disabled={page >= pages} onClick={() => setQuery({ [`${prefix}page`]: String(page + 1) })}>
            {t("list.next")}
          </button>
          <label>
            {t("list.pageSize")}{" "}
            <select value={limit} onChange={(e) => setQuery({ [`${prefix}limit`]: e.currentTarget.value === "25" ? null : e.currentTarget.value, [`${prefix}page`]: null })}>
              {PAGE_SIZES.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
          <button type="button" class="csv" onClick={exportCsv}>
            {t("list.csv")}
          </button>
        </nav>
      )}
      <ErrorNote problem={csvProblem} />
    </section>
  );
}

function FilterSelect({ filter, value, onChange }: { filter: Filter; value: string; onChange: (v: string) => void }) {
  const id = useId();
  return (
    <span class="filter">
      <label for={id}>{t(filter.label)}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="">{t("list.all")}</option>
        {filter.options.map(([v, label]) => (
          <option key={v} value={v}>
            {tx(label)}
          </option>
        ))}
      </select>
    </span>
  );
}

// ---------- Forms ----------

export type FieldType = "amount" | "image" | "text" | "number" | "email" | "password" | "textarea" | "checkbox" | "select" | "ref" | "date" | "datetime" | "time" | "url" | "color";

export interface FieldDef {
  name: string;
  label: Key;
  type?: FieldType;
  required?: boolean;
  options?: [string, string][];
  ref?: { path: string; label: (row: Row) => string };
  /** Only when creating (immutable afterwards). */
  createOnly?: boolean;
  hint?: Key;
  step?: string;
  autocomplete?: string;
}

export type Values = Record<string, unknown>;

/** An image field's value: a PNG or JPEG read into base64. */
export interface ImageValue {
  content_type: string;
  data: string;
}

/** A form value as an image, or null when it is none. */
export function asImage(v: unknown): ImageValue | null {
  if (!v || typeof v !== "object" || !("content_type" in v) || !("data" in v)) return null;
  return typeof v.content_type === "string" && typeof v.data === "string" ? { content_type: v.content_type, data: v.data } : null;
}

/** A form over field definitions; the server's `errors[].path` land next to their fields. */
export function Form(props: {
  fields: FieldDef[];
  initial: Values;
  submitLabel: string;
  onSubmit: (values: Values) => Promise<void>;
  editing?: boolean;
  children?: ComponentChildren;
  errorPrefix?: string;
}) {
  const [values, setValues] = useState<Values>(props.initial);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const submit = useRef<HTMLButtonElement>(null);
  useEffect(() => setValues(props.initial), [props.initial]);
  const fieldErrors: Record<string, string> = {};
  for (const e of problem?.errors ?? []) {
    const path = props.errorPrefix && e.path.startsWith(props.errorPrefix) ? e.path.slice(props.errorPrefix.length) : e.path;
    const field = props.fields.find((f) => path === f.name || path.startsWith(`${f.name}.`));
    const message = fieldMessage(e.message);
    if (field) fieldErrors[field.name] = fieldErrors[field.name] ? `${fieldErrors[field.name]}; ${message}` : message;
  }
  const unplaced = (problem?.errors ?? []).filter((e) => !props.fields.some((f) => e.path === f.name || e.path.startsWith(`${f.name}.`) || (props.errorPrefix && e.path.startsWith(props.errorPrefix + f.name))));
  return (
    <form
      class="form"
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setSaved(false);
        try {
          await props.onSubmit(values);
          setProblem(null);
          setSaved(true);
          // The button was disabled while saving, which drops the focus to <body>: give it back,
          // next to the "Saved." that is announced (unless the screen moved on).
          setTimeout(() => {
            if (submit.current?.isConnected && (document.activeElement === document.body || document.activeElement === null)) submit.current.focus();
          }, 0);
        } catch (err) {
          setProblem(err as Problem);
          // Focus the first field the server named.
          setTimeout(() => (document.querySelector("[aria-invalid=true]") as HTMLElement | null)?.focus(), 0);
        } finally {
          setBusy(false);
        }
      }}
    >
      {props.fields.filter((f) => !(props.editing && f.createOnly && f.type === "password")).map((f) => (
        <Field key={f.name} def={f} value={values[f.name]} error={fieldErrors[f.name]} disabled={props.editing && f.createOnly} onChange={(v) => setValues((old) => ({ ...old, [f.name]: v }))} />
      ))}
      {props.children}
      {problem && (problem.status !== 400 || unplaced.length > 0 || !problem.errors) && (
        <div class="error" role="alert">
          {problem.status === 400 && unplaced.length ? unplaced.map((e) => <p key={e.path}>{unplacedMessage(e)}</p>) : problemText(problem)}
        </div>
      )}
      {problem?.status === 400 && problem.errors && unplaced.length === 0 && (
        <p class="error" role="alert">
          {t("form.fixErrors")}
        </p>
      )}
      <div class="form-actions">
        <button ref={submit} type="submit" class="primary" disabled={busy}>
          {props.submitLabel}
        </button>
        {saved && !problem && (
          <span role="status" class="saved">
            {t("form.saved")}
          </span>
        )}
      </div>
    </form>
  );
}

export function Field(props: { def: FieldDef; value: unknown; error?: string; disabled?: boolean; onChange: (v: unknown) => void }) {
  const { def } = props;
  const id = useId();
  const errId = `${id}-err`;
  const hintId = `${id}-hint`;
  const describedBy = [props.error ? errId : "", def.hint ? hintId : ""].filter(Boolean).join(" ") || undefined;
  const common = {
    id,
    name: def.name,
    disabled: props.disabled,
    required: def.required,
    "aria-invalid": props.error ? true : undefined,
    "aria-describedby": describedBy,
  } as const;
  const type = def.type ?? "text";
  let control: JSX.Element;
  if (type === "checkbox") {
    control = <input {...common} type="checkbox" checked={!!props.value} onChange={(e) => props.onChange(e.currentTarget.checked)} />;
  } else if (type === "textarea") {
    control = <textarea {...common} rows={4} value={asText(props.value)} onInput={(e) => props.onChange(e.currentTarget.value)} />;
  } else if (type === "select") {
    control = (
      <select {...common} value={asText(props.value)} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {!def.required && <option value="">—</option>}
        {(def.options ?? []).map(([v, label]) => (
          <option key={v} value={v}>
            {tx(label)}
          </option>
        ))}
      </select>
    );
  } else if (type === "image") {
    // A PNG or JPEG read into {content_type, data (base64)}, with a preview.
    const v = asImage(props.value);
    control = (
      <span class="image-field">
        {v && v.data && <img src={`data:${v.content_type};base64,${v.data}`} alt="" width={64} height={64} />}
        <input
          {...common}
          type="file"
          accept="image/png,image/jpeg"
          onChange={async (e) => {
            const file = e.currentTarget.files?.[0];
            if (!file) return;
            const bytes = new Uint8Array(await file.arrayBuffer());
            let binary = "";
            for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
            props.onChange({ content_type: file.type, data: btoa(binary) });
          }}
        />
      </span>
    );
  } else if (type === "ref") {
    control = <RefSelect {...common} path={def.ref!.path} labelOf={def.ref!.label} value={asText(props.value)} onChange={props.onChange} />;
  } else {
    // An amount is text (inputmode decimal) so that "1.234,56" can be typed; parseAmount reads it.
    const inputType = type === "datetime" ? "datetime-local" : type === "amount" ? "text" : type;
    control = (
      <input
        {...common}
        type={inputType as "text"}
        inputMode={type === "amount" ? "decimal" : undefined}
        step={def.step}
        autocomplete={def.autocomplete ?? (type === "password" ? "new-password" : "off")}
        value={asText(props.value)}
        onInput={(e) => props.onChange(e.currentTarget.value)}
      />
    );
  }
  return (
    <div class={`field ${type === "checkbox" ? "check" : ""} ${props.error ? "invalid" : ""}`}>
      <label for={id}>
        {t(def.label)}
        {def.required && <span aria-hidden="true"> *</span>}
      </label>
      {control}
      {def.hint && (
        <small id={hintId} class="hint">
          {t(def.hint)}
        </small>
      )}
      {props.error && (
        <small id={errId} class="field-error">
          {props.error}
        </small>
      )}
    </div>
  );
}

/**
 * A reference to another record: a search box that narrows the list (the server's ?q) and a
 * select of the matches, so 10,000 contracts never load at once.
 */
export function RefSelect<const P extends string>(props: { id: string; name?: string; path: P; labelOf: (r: ListItemOf<P>) => string; value: string; onChange: (v: string) => void; disabled?: boolean; required?: boolean; "aria-invalid"?: boolean; "aria-describedby"?: string }) {
  const [q, setQ] = useState("");
  const [items, setItems] = useState<ListItemOf<P>[]>([]);
  const [current, setCurrent] = useState<ListItemOf<P> | null>(null);
  useEffect(() => {
    let live = true;
    const timer = setTimeout(() => {
      call<Page<ListItemOf<P>>>("GET", props.path, { query: { limit: 50, ...(q ? { q } : {}) } }).then(
        (p) => live && setItems(p.items),
        () => live && setItems([]),
      );
    }, 200);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [q, props.path]);
  useEffect(() => {
    if (props.value && !items.some((i) => idOf(i) === props.value) && idOf(current) !== props.value) {
      call<ListItemOf<P>>("GET", `${props.path}/${props.value}`).then(setCurrent, () => {});
    }
  }, [props.value]);
  const options = current && !items.some((i) => idOf(i) === idOf(current)) ? [current, ...items] : items;
  return (
    <span class="ref">
      <input
        type="search"
        aria-label={t("form.filterOptions")}
        placeholder={t("form.filterOptions")}
        value={q}
        disabled={props.disabled}
        onInput={(e) => setQ(e.currentTarget.value)}
      />
      <select id={props.id} name={props.name} value={props.value} disabled={props.disabled} aria-invalid={props["aria-invalid"]} aria-describedby={props["aria-describedby"]} onChange={(e) => props.onChange(e.currentTarget.value)}>
        <option value="">—</option>
        {options.map((r) => (
          <option key={idOf(r)} value={idOf(r)}>
            {props.labelOf(r)}
          </option>
        ))}
      </select>
    </span>
  );
}

// ---------- Actions ----------

/** A button that asks first, saying what will happen, in a modal dialog. */
export function ConfirmButton(props: { label: string; message: string; confirmLabel?: string; danger?: boolean; onConfirm: () => Promise<void> | void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const titleId = useId();
  return (
    <>
      <button type="button" class={props.danger ? "danger" : ""} onClick={() => { setProblem(null); ref.current?.showModal(); }}>
        {props.label}
      </button>
      <dialog ref={ref} aria-labelledby={titleId} class="confirm">
        <h2 id={titleId}>{props.label}</h2>
        <p>{props.message}</p>
        <ErrorNote problem={problem} />
        <div class="form-actions">
          <button
            type="button"
            class={props.danger ? "danger" : "primary"}
            disabled={busy}
            onClick={async () => {
              setBusy(true);
              try {
                await props.onConfirm();
                ref.current?.close();
              } catch (e) {
                setProblem(e as Problem);
              } finally {
                setBusy(false);
              }
            }}
          >
            {props.confirmLabel ?? t("common.confirm")}
          </button>
          <button type="button" onClick={() => ref.current?.close()}>
            {t("common.cancel")}
          </button>
        </div>
      </dialog>
    </>
  );
}

/** A secret shown this once, with a copy button. */
export function SecretOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  const id = useId();
  return (
    <div class="secret" role="region" aria-labelledby={id}>
      <p id={id}>
        <strong>{label}</strong> {t("secret.once")}
      </p>
      <code class="secret-value">{value}</code>
      <button
        type="button"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(value);
            setCopied(true);
          } catch {
            setCopied(false);
          }
        }}
      >
        {t("secret.copy")}
      </button>
      {copied && <span role="status">{t("secret.copied")}</span>}
    </div>
  );
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  const id = useId();
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** Read-only facts as a definition list. */
export function Facts({ items }: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {items.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v === null || v === undefined || v === "" ? "—" : v}</dd>
        </div>
      ))}
    </dl>
  );
}
