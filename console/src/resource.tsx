// The generic screens of a resource: a list (/<key>), a create form (/<key>/new) and a detail
// with its edit form, on/off switch, delete and extra sections (/<key>/<id>).
import type { ComponentChildren } from "preact";
import { useMemo, useState } from "preact/hooks";
import { call, type ListItemOf, type RecordOf, type Row } from "./api";
import { t, type Key, amountText, parseAmount } from "./i18n";
import { navigate } from "./router";
import { historyTypeOf } from "./screens/history-targets";
import { RecordHistory } from "./screens/lazy";
import { ConfirmButton, ErrorNote, Form, Link, ListView, PageHeader, SecretOnce, StatusBadge, useLoad, type Column, type FieldDef, type Filter, type Values } from "./ui";

export interface ResourceDef<P extends string = string> {
  key: string;
  api: P;
  title: Key;
  singular: Key;
  area: string;
  superOnly?: boolean;
  columns: Column<ListItemOf<P>>[];
  filters?: Filter[];
  fields: FieldDef[];
  creatable?: boolean;
  editable?: boolean;
  deletable?: boolean;
  /** PUT {id}/active and {id}/inactive. */
  toggle?: boolean;
  /** Body sent from the form values (default: the values, empty strings as null). */
  toBody?: (v: Values, editing: boolean) => unknown;
  /** Form values from a record (default: the record). */
  toValues?: (r: RecordOf<P>) => Values;
  nameOf?: (r: RecordOf<P>) => string;
  /** Where a list row leads (default: the record's detail). */
  rowHref?: (r: ListItemOf<P>) => string;
  /** A response field shown once after creating (api_key, secret). */
  once?: { field: string; label: Key };
  /** Sections below the detail, given the record as its route's type. */
  extra?: (row: RecordOf<P>, reload: () => void, replace: (r: RecordOf<P>) => void) => ComponentChildren;
  /** Records the server never lets go or switch off (built-in ones): no such buttons. */
  locked?: (r: RecordOf<P>) => boolean;
  /** Sections below the list. */
  listExtra?: () => ComponentChildren;
  deleteMessage?: Key;
}

/**
 * A resource whose `extra` sections take the record as GET `<api>/{id}` types it: a field renamed in
 * the API fails `tsc` in the section that reads it. (The generic screens hold any resource.)
 */
export function resource<const P extends string>(def: ResourceDef<P>): ResourceDef {
  return def as unknown as ResourceDef;
}

/** Empty strings become null; numbers typed into number fields become numbers. */
export function cleanBody(fields: FieldDef[], v: Values, editing: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (editing && f.createOnly) continue;
    let value = v[f.name];
    if (value === "" || value === undefined) value = f.type === "checkbox" ? false : null;
    else if (f.type === "number" && typeof value === "string") value = Number(value);
    else if (f.type === "amount" && typeof value === "string") value = parseAmount(value);
    else if (f.type === "datetime" && typeof value === "string") value = new Date(value).toISOString();
    if (value === null && f.type === "password") continue;
    out[f.name] = value;
  }
  return out;
}

export function initialValues(fields: FieldDef[], r: Row | null): Values {
  const v: Values = {};
  for (const f of fields) {
    let x = r ? r[f.name] : undefined;
    if (f.type === "datetime" && typeof x === "string") x = toLocalInput(x);
    if (f.type === "date" && typeof x === "string") x = x.slice(0, 10);
    if (f.type === "amount" && typeof x === "number") x = amountText(x);
    if (f.type === "password") x = "";
    v[f.name] = x ?? (f.type === "checkbox" ? false : "");
  }
  return v;
}

export function toLocalInput(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** What was just created, so the detail can show its once-only secret after navigating. */
let justCreated: Row | null = null;

export function ResourceList({ def }: { def: ResourceDef }) {
  return (
    <>
      <PageHeader title={t(def.title)}>
        {def.creatable !== false && (
          <Link to={`/${def.key}/new`} class="button primary">
            {t("common.new")}
          </Link>
        )}
      </PageHeader>
      <ListView path={def.api} columns={def.columns} filters={def.filters} rowHref={def.rowHref ?? ((r) => `/${def.key}/${r.id}`)} label={t(def.title)} />
      {def.listExtra?.()}
    </>
  );
}

export function ResourceCreate({ def }: { def: ResourceDef }) {
  const initial = useMemo(() => initialValues(def.fields, null), [def]);
  return (
    <>
      <PageHeader title={`${t("common.new")}: ${t(def.singular)}`} />
      <p>
        <Link to={`/${def.key}`}>← {t(def.title)}</Link>
      </p>
      <Form
        fields={def.fields}
        initial={initial}
        submitLabel={t("common.create")}
        onSubmit={async (v) => {
          const body = def.toBody ? def.toBody(v, false) : cleanBody(def.fields, v, false);
          const row = await call<Row>("POST", def.api, { body });
          justCreated = row;
          navigate(`/${def.key}/${row.id}`);
        }}
      />
    </>
  );
}

export function ResourceDetail({ def, id }: { def: ResourceDef; id: string }) {
  const [created] = useState(() => {
    const c = justCreated && justCreated.id === id ? justCreated : null;
    justCreated = null;
    return c;
  });
  const { data, error, reload, set } = useLoad(() => call<Row>("GET", `${def.api}/${id}`), [def.api, id]);
  const initial = useMemo(() => (data ? (def.toValues ? def.toValues(data) : initialValues(def.fields, data)) : null), [data]);
  const secret = created && def.once ? created[def.once.field] : undefined;
  const name = data ? (def.nameOf ? def.nameOf(data) : typeof data.name === "string" ? data.name : data.id) : "";
  return (
    <>
      <PageHeader title={data ? `${t(def.singular)}: ${name}` : t(def.singular)}>
        {data && def.toggle && !def.locked?.(data) && (
          <>
            <StatusBadge on={!!data.status} />
            <ConfirmButton
              label={data.status ? t("common.deactivate") : t("common.activate")}
              message={data.status ? t("confirm.deactivate", { name }) : t("confirm.activate", { name })}
              onConfirm={async () => set(await call<Row>("PUT", `${def.api}/${id}/${data.status ? "inactive" : "active"}`))}
            />
          </>
        )}
        {data && def.deletable !== false && !def.locked?.(data) && (
          <ConfirmButton
            danger
            label={t("common.delete")}
            message={def.deleteMessage ? t(def.deleteMessage, { name }) : t("confirm.delete", { name })}
            confirmLabel={t("common.delete")}
            onConfirm={async () => {
              await call("DELETE", `${def.api}/${id}`);
              navigate(`/${def.key}`);
            }}
          />
        )}
      </PageHeader>
      <p>
        <Link to={`/${def.key}`}>← {t(def.title)}</Link>
      </p>
      <ErrorNote problem={error} />
      {def.once && typeof secret === "string" && <SecretOnce label={t(def.once.label)} value={secret} />}
      {data && initial && def.editable !== false && (
        <section class="card" aria-label={t("common.edit")}>
          <Form
            fields={def.fields}
            initial={initial}
            editing
            submitLabel={t("common.save")}
            onSubmit={async (v) => {
              const body = def.toBody ? def.toBody(v, true) : cleanBody(def.fields, v, true);
              set(await call<Row>("PUT", `${def.api}/${id}`, { body }));
            }}
          />
        </section>
      )}
      {data && def.extra?.(data, reload, set)}
      {data && historyTypeOf(def.key) && <RecordHistory type={historyTypeOf(def.key)!} id={id} refresh={data.updated_at} />}
    </>
  );
}
