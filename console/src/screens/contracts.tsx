// Contracts: the searchable, filtered, server-paged list; the create form; the detail with its
// parties, address, connection settings (the password shown only when just set), items, flags and
// status changes.
import { useMemo, useState } from "preact/hooks";
import { asText, call, can, type Contract, type Page, type Problem, type Row, type Schema } from "../api";
import { amountText, fmtDate, fmtMoney, fmtNumber, parseAmount, t, tx } from "../i18n";
import { navigate } from "../router";
import { SessionsOf } from "./radius";
import { ADDRESS_FIELDS, addressOf, addressValues } from "./address";
import { ConfirmButton, ErrorNote, Facts, Form, Link, ListView, PageHeader, RefSelect, SecretOnce, Section, useLoad, type FieldDef, type Values } from "../ui";

const STATUSES = ["ACTIVE", "INACTIVE", "SUSPENDED", "CANCELLED"];
const STAGES = ["PENDING", "INSTALLING", "INSTALLED", "UNINSTALLED"];
const opts = (xs: string[]) => xs.map((x) => [x, `enum.${x}`] as [string, string]);

export function ContractList() {
  return (
    <>
      <PageHeader title={t("nav.contracts")}>
        <Link to="/contracts/new" class="button primary">
          {t("common.new")}
        </Link>
      </PageHeader>
      <ListView
        path="/api/contract"
        label={t("nav.contracts")}
        rowHref={(r) => `/contracts/${r.id}`}
        filters={[
          { name: "contract_status", label: "f.contract_status", options: opts(STATUSES) },
          { name: "contract_stage", label: "f.contract_stage", options: opts(STAGES) },
        ]}
        columns={[
          { key: "number", label: "f.number" },
          { key: "customer", label: "f.customer", sort: false, render: (r) => (r.customer ? <Link to={`/customers/${r.customer.id}`}>{r.customer.name}</Link> : "—") },
          { key: "contract_status", label: "f.contract_status" },
          { key: "contract_stage", label: "f.contract_stage" },
          { key: "start_date", label: "f.start_date", render: (r) => fmtDate(r.start_date?.slice(0, 10)) },
          { key: "total_value", label: "f.total_value", render: (r) => fmtMoney(r.total_value) },
        ]}
      />
    </>
  );
}

const CREATE_FIELDS: FieldDef[] = [
  { name: "number", label: "f.number", required: true },
  { name: "customer_id", label: "f.customer", type: "ref", required: true, ref: { path: "/api/person", label: personLabel } },
  { name: "start_date", label: "f.start_date", type: "date", required: true },
  { name: "total_value", label: "f.total_value", type: "amount", required: true },
  { name: "contract_status", label: "f.contract_status", type: "select", options: opts(STATUSES) },
  { name: "contract_stage", label: "f.contract_stage", type: "select", options: opts(STAGES) },
  ...ADDRESS_FIELDS,
];

/** A person as a choice: the name, with the document when there is one. */
function personLabel(p: Row): string {
  const doc = asText(p.doc_identity);
  return `${asText(p.name)}${doc ? ` (${doc})` : ""}`;
}

/** Server paths of the address name the address's own fields. */
function flattenErrors(p: Problem): Problem {
  return { ...p, errors: p.errors?.map((e) => ({ ...e, path: e.path.replace(/^address\./, "") })) };
}

export function ContractCreate() {
  const initial = useMemo(() => ({ number: "", customer_id: "", start_date: new Date().toISOString().slice(0, 10), total_value: "", contract_status: "", contract_stage: "", ...addressValues(null) }), []);
  return (
    <>
      <PageHeader title={`${t("common.new")}: ${t("r.contract")}`} />
      <p>
        <Link to="/contracts">← {t("nav.contracts")}</Link>
      </p>
      <Form
        fields={CREATE_FIELDS}
        initial={initial}
        submitLabel={t("common.create")}
        onSubmit={async (v) => {
          const body: Record<string, unknown> = {
            number: v.number,
            customer_id: v.customer_id || "",
            start_date: v.start_date,
            total_value: v.total_value === "" ? null : parseAmount(asText(v.total_value)),
            address: addressOf(v),
          };
          if (v.contract_status) body.contract_status = v.contract_status;
          if (v.contract_stage) body.contract_stage = v.contract_stage;
          try {
            const row = await call<Contract>("POST", "/api/contract", { body });
            justCreatedPassword = { id: row.id, password: row.config?.password };
            navigate(`/contracts/${row.id}`);
          } catch (e) {
            throw flattenErrors(e as Problem);
          }
        }}
      />
    </>
  );
}

const PERSON_REF = { path: "/api/person", label: personLabel };

const EDIT_FIELDS: FieldDef[] = [
  { name: "number", label: "f.number", required: true },
  { name: "customer_id", label: "f.customer", type: "ref", required: true, ref: PERSON_REF },
  { name: "billing_customer_id", label: "f.billing_customer", type: "ref", ref: PERSON_REF, hint: "hint.billing" },
  { name: "agent_id", label: "f.agent", type: "ref", ref: PERSON_REF },
  { name: "contract_status", label: "f.contract_status", type: "select", required: true, options: opts(STATUSES) },
  { name: "contract_stage", label: "f.contract_stage", type: "select", required: true, options: opts(STAGES) },
  { name: "total_value", label: "f.total_value", type: "amount", required: true },
  { name: "signature_date", label: "f.signature_date", type: "date" },
  { name: "approval_date", label: "f.approval_date", type: "date" },
  { name: "start_date", label: "f.start_date", type: "date", required: true },
  { name: "end_date", label: "f.end_date", type: "date" },
  { name: "suspension_date", label: "f.suspension_date", type: "date" },
  { name: "cancellation_date", label: "f.cancellation_date", type: "date" },
];

const day = (v: string | null | undefined) => (v ? v.slice(0, 10) : "");

/** The contract's own fields (PUT replaces them all: what the form does not show is sent back as it is). */
const dayOrNull = (v: unknown) => (typeof v === "string" && v ? v.slice(0, 10) : null);

/** A contract's PUT body (a full update) from the contract as its GET answers it. */
export function contractBody(c: Contract): Record<string, unknown> {
  return {
    number: c.number,
    customer_id: c.customer?.id ?? "",
    billing_customer_id: c.billing_customer?.id ?? null,
    agent_id: c.agent?.id ?? null,
    contract_status: c.contract_status,
    contract_stage: c.contract_stage,
    total_value: c.total_value ?? 0,
    signature_date: dayOrNull(c.signature_date),
    approval_date: dayOrNull(c.approval_date),
    start_date: dayOrNull(c.start_date),
    end_date: dayOrNull(c.end_date),
    suspension_date: dayOrNull(c.suspension_date),
    cancellation_date: dayOrNull(c.cancellation_date),
    address: addressOf(addressValues(c.address ?? {})),
    json_original: c.original ?? null,
    json_billing: c.billing ?? null,
    json_payment_method: c.payment_method ?? null,
    json_items: c.items ?? null,
  };
}

function ContractEdit({ c, onSaved }: { c: Contract; onSaved: (r: Contract) => void }) {
  const initial = useMemo(
    () => ({
      number: c.number,
      customer_id: c.customer?.id ?? "",
      billing_customer_id: c.billing_customer?.id ?? "",
      agent_id: c.agent?.id ?? "",
      contract_status: c.contract_status,
      contract_stage: c.contract_stage,
      total_value: amountText(c.total_value),
      signature_date: day(c.signature_date),
      approval_date: day(c.approval_date),
      start_date: day(c.start_date),
      end_date: day(c.end_date),
      suspension_date: day(c.suspension_date),
      cancellation_date: day(c.cancellation_date),
    }),
    [c.updated_at],
  );
  return (
    <Section title={t("contract.edit")}>
      <Form
        fields={EDIT_FIELDS}
        initial={initial}
        submitLabel={t("common.save")}
        onSubmit={async (v) => {
          const body = {
            ...contractBody(c),
            number: v.number,
            customer_id: v.customer_id || "",
            billing_customer_id: v.billing_customer_id || null,
            agent_id: v.agent_id || null,
            contract_status: v.contract_status,
            contract_stage: v.contract_stage,
            total_value: v.total_value === "" ? null : parseAmount(asText(v.total_value)),
            signature_date: v.signature_date || null,
            approval_date: v.approval_date || null,
            start_date: v.start_date,
            end_date: v.end_date || null,
            suspension_date: v.suspension_date || null,
            cancellation_date: v.cancellation_date || null,
          };
          onSaved(await call<Contract>("PUT", `/api/contract/${c.id}`, { body }));
        }}
      />
    </Section>
  );
}

let justCreatedPassword: { id: string; password?: string } | null = null;

const CONFIG_FIELDS: FieldDef[] = [
  { name: "username", label: "f.username", required: true },
  { name: "password", label: "f.connPassword", type: "password", hint: "hint.passwordKeep" },
  { name: "min_upload", label: "f.min_upload", hint: "hint.speed" },
  { name: "max_upload", label: "f.max_upload", hint: "hint.speed" },
  { name: "min_download", label: "f.min_download", hint: "hint.speed" },
  { name: "max_download", label: "f.max_download", hint: "hint.speed" },
  { name: "pool_name_ipv4", label: "f.pool_name_ipv4" },
  { name: "ipv4", label: "f.ipv4" },
  { name: "poll_name_ipv6", label: "f.poll_name_ipv6" },
  { name: "ipv6", label: "f.ipv6" },
  { name: "allowance_gb", label: "f.allowance_gb", type: "number", step: "any", hint: "hint.allowance_gb" },
  { name: "throttle_max_download", label: "f.throttle_max_download", hint: "hint.speed" },
  { name: "throttle_max_upload", label: "f.throttle_max_upload", hint: "hint.speed" },
];

function Party({ title, p }: { title: string; p: Schema<"Party"> | null }) {
  return (
    <div>
      <h3>{title}</h3>
      {p ? (
        <Facts
          items={[
            [t("f.name"), <Link to={`/customers/${p.id}`}>{p.name}</Link>],
            [t("f.doc_identity"), p.doc_identity ? `${p.tp_doc_identity ?? ""} ${p.doc_identity}`.trim() : null],
          ]}
        />
      ) : (
        <p>—</p>
      )}
    </div>
  );
}

export function ContractDetail({ id }: { id: string }) {
  const [password, setPassword] = useState<string | null>(() => {
    const p = justCreatedPassword?.id === id ? (justCreatedPassword.password ?? null) : null;
    justCreatedPassword = null;
    return p;
  });
  const { data: c, error, set } = useLoad(() => call<Contract>("GET", `/api/contract/${id}`), [id]);
  const configInitial = useMemo(() => {
    const cfg: Record<string, unknown> = c?.config ?? {};
    const v: Values = {};
    for (const f of CONFIG_FIELDS) v[f.name] = f.name === "password" ? "" : (cfg[f.name] ?? "");
    return v;
  }, [c?.updated_at]);
  const addressInitial = useMemo(() => addressValues(c?.address), [c?.updated_at]);
  if (error) return <ErrorNote problem={error} />;
  if (!c) return <p aria-busy="true">{t("common.loading")}</p>;
  const status = c.contract_status as string;
  return (
    <>
      <PageHeader title={`${t("r.contract")} ${c.number}`}>
        <span class={`badge ${status === "ACTIVE" ? "ok" : "off"}`}>{tx(`enum.${status}`)}</span>
        {status !== "ACTIVE" && status !== "CANCELLED" && (
          <ConfirmButton label={t("contract.activate")} message={t("contract.activateConfirm", { number: c.number })} onConfirm={async () => set(await call<Contract>("PUT", `/api/contract/${id}/active`))} />
        )}
        {(status === "ACTIVE" || status === "SUSPENDED") && (
          <ConfirmButton danger label={t("contract.deactivate")} message={t("contract.deactivateConfirm", { number: c.number })} onConfirm={async () => set(await call<Contract>("PUT", `/api/contract/${id}/inactive`))} />
        )}
      </PageHeader>
      <p>
        <Link to="/contracts">← {t("nav.contracts")}</Link>
      </p>
      <Section title={t("contract.summary")}>
        <Facts
          items={[
            [t("f.number"), c.number],
            [t("f.contract_status"), tx(`enum.${status}`)],
            [t("network.state"), c.network.state === "normal" ? tx("enum.normal") : c.network.until ? `${tx(`enum.${c.network.state}`)} — ${t("f.until")} ${fmtDate(c.network.until)}` : tx(`enum.${c.network.state}`)],
            [t("f.contract_stage"), tx(`enum.${c.contract_stage}`)],
            [t("f.start_date"), fmtDate(c.start_date?.slice(0, 10))],
            [t("f.end_date"), c.end_date ? fmtDate(c.end_date.slice(0, 10)) : null],
            [t("f.total_value"), fmtMoney(c.total_value)],
          ]}
        />
      </Section>
      <Section title={t("contract.parties")}>
        <div class="grid3">
          <Party title={t("f.customer")} p={c.customer} />
          <Party title={t("f.billing_customer")} p={c.billing_customer} />
          <Party title={t("f.agent")} p={c.agent} />
        </div>
      </Section>
      <ContractEdit c={c} onSaved={set} />
      <Section title={t("contract.connection")}>
        {password && <SecretOnce label={t("f.connPassword")} value={password} />}
        <Form
          fields={CONFIG_FIELDS}
          initial={configInitial}
          submitLabel={t("common.save")}
          onSubmit={async (v) => {
            const body: Record<string, unknown> = {};
            for (const f of CONFIG_FIELDS) {
              if (f.name === "password" && !v.password) continue;
              body[f.name] = v[f.name] === "" || v[f.name] === null ? null : f.name === "allowance_gb" ? Number(v[f.name]) : v[f.name];
            }
            const row = await call<Contract>("POST", `/api/contract/${id}/config`, { body });
            setPassword(v.password ? row.config?.password : null);
            set(row);
          }}
        />
      </Section>
      <Section title={t("contract.address")}>
        <Form
          fields={ADDRESS_FIELDS}
          initial={addressInitial}
          submitLabel={t("common.save")}
          onSubmit={async (v) => set(await call<Contract>("POST", `/api/contract/${id}/address`, { body: addressOf(v) }))}
        />
      </Section>
      <ContractItems id={id} />
      <ContractFlags id={id} flags={c.flags ?? []} onChange={(flags) => set({ ...c, flags })} />
      <ContractLinks id={id} />
      {can("isp", "/api/isp/session") && (
        <SessionsOf query={{ contract_id: id }} disconnectAll={{ path: `/api/contract/${id}/disconnect`, message: t("session.disconnectAllConfirm", { number: c.number }) }} />
      )}
    </>
  );
}

/** An item as the items form sends it (a new one has no description or price yet). */
type ItemDraft = Pick<Schema<"ContractItem">, "product_id" | "quantity"> & Partial<Pick<Schema<"ContractItem">, "description" | "unit_price">>;

function ContractItems({ id }: { id: string }) {
  const items = useLoad(() => call<Schema<"ItemsResponse">>("GET", `/api/contract/${id}/items`), [id]);
  const [product, setProduct] = useState("");
  const [quantity, setQuantity] = useState("1");
  const [problem, setProblem] = useState<Problem | null>(null);
  const save = async (next: ItemDraft[]) => {
    try {
      const res = await call<Schema<"ItemsResponse">>("POST", `/api/contract/${id}/items`, {
        body: { items: next.map((i) => ({ product_id: i.product_id, description: i.description ?? null, quantity: Number(i.quantity), unit_price: i.unit_price ?? null })) },
      });
      items.set(res);
      setProblem(null);
    } catch (e) {
      setProblem(e as Problem);
    }
  };
  const list = items.data?.items ?? [];
  return (
    <Section title={t("contract.items")}>
      <ErrorNote problem={items.error ?? problem} />
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">{t("f.description")}</th>
              <th scope="col">{t("f.quantity")}</th>
              <th scope="col">{t("f.unit_price")}</th>
              <th scope="col">{t("f.total")}</th>
              <th scope="col">{t("common.actions")}</th>
            </tr>
          </thead>
          <tbody>
            {list.map((i, n) => (
              <tr key={n}>
                <td>{i.description}</td>
                <td>{fmtNumber(i.quantity)}</td>
                <td>{fmtMoney(i.unit_price)}</td>
                <td>{fmtMoney(i.total)}</td>
                <td>
                  <ConfirmButton danger label={t("common.remove")} message={t("contract.removeItem", { name: i.description })} onConfirm={() => save(list.filter((_, k) => k !== n))} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.length === 0 && <p class="empty">{t("contract.noItems")}</p>}
      </div>
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          if (product) save([...list, { product_id: product, quantity: Number(quantity) }]).then(() => setProduct(""));
        }}
      >
        <label for="item-product">{t("f.product")}</label>
        <RefSelect id="item-product" path="/api/product" labelOf={(p) => `${asText(p.identity)} — ${asText(p.name)}`} value={product} onChange={setProduct} />
        <label for="item-qty">{t("f.quantity")}</label>
        <input id="item-qty" type="number" min="0" step="any" value={quantity} onInput={(e) => setQuantity(e.currentTarget.value)} />
        <button type="submit" disabled={!product}>
          {t("contract.addItem")}
        </button>
      </form>
    </Section>
  );
}

function ContractFlags({ id, flags, onChange }: { id: string; flags: string[]; onChange: (f: string[]) => void }) {
  const all = useLoad(() => call<Page<Schema<"Classification">>>("GET", "/api/classification", { query: { limit: 500, sort: "name" } }), []);
  const [add, setAdd] = useState("");
  const [problem, setProblem] = useState<Problem | null>(null);
  const patch = async (body: { add?: string[]; remove?: string[] }) => {
    try {
      onChange((await call<{ flags: string[] }>("PATCH", `/api/contract/${id}/flags`, { body })).flags);
      setProblem(null);
    } catch (e) {
      setProblem(e as Problem);
    }
  };
  return (
    <Section title={t("contract.flags")}>
      <ErrorNote problem={problem} />
      <ul class="chips">
        {flags.map((f) => (
          <li key={f}>
            {f}{" "}
            <button type="button" aria-label={t("contract.removeFlag", { name: f })} onClick={() => patch({ remove: [f] })}>
              ×
            </button>
          </li>
        ))}
        {flags.length === 0 && <li class="empty">{t("contract.noFlags")}</li>}
      </ul>
      <div class="toolbar">
        <label for="flag-add">{t("contract.addFlag")}</label>
        <select id="flag-add" value={add} onChange={(e) => setAdd(e.currentTarget.value)}>
          <option value="">—</option>
          {(all.data?.items ?? [])
            .filter((c) => !flags.includes(c.name))
            .map((c) => (
              <option key={c.id} value={c.name}>
                {c.name}
              </option>
            ))}
        </select>
        <button type="button" disabled={!add} onClick={() => patch({ add: [add] }).then(() => setAdd(""))}>
          {t("common.add")}
        </button>
      </div>
    </Section>
  );
}

/** Links the contract to its identity in an external application. */
export function ContractLinks({ id }: { id: string }) {
  const fields: FieldDef[] = [
    { name: "external_app_id", label: "f.externalApp", type: "ref", required: true, ref: { path: "/api/externalapp", label: (a) => asText(a.name) } },
    { name: "identity", label: "f.externalIdentity", required: true },
  ];
  const [linked, setLinked] = useState<Schema<"ExternalLink"> | null>(null);
  const initial = useMemo(() => ({ external_app_id: "", identity: "" }), [linked]);
  return (
    <Section title={t("contract.links")}>
      {linked && <p role="status">{t("contract.linked", { app: linked.external_app_name, identity: linked.identity })}</p>}
      <Form fields={fields} initial={initial} submitLabel={t("contract.link")} onSubmit={async (v) => setLinked(await call<Schema<"ExternalLink">>("POST", `/api/contract/${id}/externalapp`, { body: v }))} />
    </Section>
  );
}
