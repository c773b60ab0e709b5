// Contract logic shared by the local rows and the external-app upsert.
import { asc, eq, sql } from "drizzle-orm";
import ipaddr from "ipaddr.js";
import type { TenantDb } from "../../db/sqlite";
import { contractConfigs, contractItems, contracts } from "../../db/tenant/schema";
import { randomBase62 } from "../../lib/ids";
import { conflict, invalidMany, notFound, type FieldError } from "../../lib/problem";
import { canonicalDate, dateAsMidnight } from "../../lib/time";
import { addressColumns, addressView, cityRef, clientOf, type Db } from "../registry-common";
import { findPerson, partyView } from "../person/service";
import { DATE_FIELDS, type Contract, type ContractConfig, type ContractConfigInput, type ContractInput, type ContractItem, type DateField } from "./model";

export type ContractRow = typeof contracts.$inferSelect;
export type ConfigRow = typeof contractConfigs.$inferSelect;
export const MASKED_PASSWORD = "********";

const json = (v: unknown): string | null => (v === undefined || v === null ? null : JSON.stringify(v));
const unjson = (v: string | null): unknown => (v === null ? null : JSON.parse(v));

export function findContract(db: Db, id: string): ContractRow | undefined {
  return clientOf(db).query<ContractRow, [string]>("SELECT * FROM contracts WHERE id = ?1").get(id) ?? undefined;
}

export function getContract(db: Db, id: string): ContractRow {
  const row = findContract(db, id);
  if (!row) throw notFound("Contract");
  return row;
}

export function getConfig(db: Db, contractId: string): ConfigRow {
  return clientOf(db).query<ConfigRow, [string]>("SELECT * FROM contract_configs WHERE contract_id = ?1").get(contractId)!;
}

export function flagNames(db: Db, contractId: string): string[] {
  return clientOf(db)
    .query<{ name: string }, [string]>(
      "SELECT c.name FROM contract_flags f JOIN classifications c ON c.id = f.classification_id WHERE f.contract_id = ?1 ORDER BY c.name",
    )
    .all(contractId)
    .map((r) => r.name);
}

export function configView(c: ConfigRow, revealPassword: boolean): ContractConfig {
  return {
    username: c.username,
    password: revealPassword ? c.password : MASKED_PASSWORD,
    min_upload: c.min_upload,
    max_upload: c.max_upload,
    min_download: c.min_download,
    max_download: c.max_download,
    pool_name_ipv4: c.pool_name_ipv4,
    ipv4: c.ipv4,
    poll_name_ipv6: c.poll_name_ipv6,
    ipv6: c.ipv6,
  };
}

/** The Contract as GET returns it; the password in clear only when `revealPassword`. */
export function contractView(db: Db, r: ContractRow, timeZone: string, revealPassword = false): Contract {
  const party = (id: string | null) => {
    if (!id) return null;
    const p = findPerson(db, id);
    return p ? partyView(db, p) : null;
  };
  return {
    id: r.id,
    customer: party(r.customer_id)!,
    billing_customer: party(r.billing_customer_id)!,
    agent: party(r.agent_id),
    number: r.number,
    signature_date: dateAsMidnight(r.signature_date, timeZone),
    approval_date: dateAsMidnight(r.approval_date, timeZone),
    start_date: dateAsMidnight(r.start_date, timeZone)!,
    end_date: dateAsMidnight(r.end_date, timeZone),
    cancellation_date: dateAsMidnight(r.cancellation_date, timeZone),
    suspension_date: dateAsMidnight(r.suspension_date, timeZone),
    address: addressView(db, r),
    total_value: r.total_value,
    contract_status: r.contract_status,
    contract_stage: r.contract_stage,
    original: unjson(r.json_original),
    billing: unjson(r.json_billing),
    payment_method: unjson(r.json_payment_method),
    items: unjson(r.json_items),
    config: configView(getConfig(db, r.id), revealPassword),
    flags: flagNames(db, r.id),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

type CommonInput = Pick<ContractInput, DateField | "number" | "total_value" | "contract_status" | "contract_stage" | "json_original" | "json_billing" | "json_payment_method" | "json_items">;

/** Dates of a body as stored (`YYYY-MM-DD`); every malformed one is reported. */
export function checkDates(body: CommonInput, errors: FieldError[]): Record<DateField, string | null> {
  const out = {} as Record<DateField, string | null>;
  for (const f of DATE_FIELDS) {
    const raw = body[f];
    if (raw === undefined || raw === null) {
      out[f] = null;
      continue;
    }
    const d = canonicalDate(raw);
    if (!d) errors.push({ path: f, message: "must be a date, YYYY-MM-DD" });
    out[f] = d;
  }
  return out;
}

/** Columns of a contract from either input; PUT semantics (left out: null or the default). */
export function contractColumns(body: CommonInput, dates: Record<DateField, string | null>) {
  return {
    number: body.number,
    ...dates,
    start_date: dates.start_date!,
    total_value: body.total_value,
    contract_status: body.contract_status ?? "ACTIVE",
    contract_stage: body.contract_stage ?? "PENDING",
    json_original: json(body.json_original),
    json_billing: json(body.json_billing),
    json_payment_method: json(body.json_payment_method),
    json_items: json(body.json_items),
  };
}

export function checkNumberFree(db: Db, number: string, exceptId: string | null): void {
  const other = db.select({ id: contracts.id }).from(contracts).where(eq(contracts.number, number)).get();
  if (other && other.id !== exceptId) throw conflict("The contract number is used by another contract");
}

function usernameTaken(db: Db, username: string, exceptContractId: string | null): boolean {
  const row = db.select({ id: contractConfigs.contract_id }).from(contractConfigs).where(eq(contractConfigs.username, username)).get();
  return !!row && row.id !== exceptContractId;
}

/** A new contract's connection settings: username = number (or the id when taken), random password. */
export function insertDefaultConfig(tx: Db, contractId: string, number: string): void {
  const username = usernameTaken(tx, number, null) ? contractId : number;
  tx.insert(contractConfigs).values({ contract_id: contractId, username, password: randomBase62(12) }).run();
}

/** The local input's ids must name existing records: 400 naming each unknown one. */
export function checkLocalInput(db: Db, body: ContractInput): { dates: Record<DateField, string | null> } {
  const errors: FieldError[] = [];
  const dates = checkDates(body, errors);
  for (const f of ["customer_id", "billing_customer_id", "agent_id"] as const) {
    const id = body[f];
    if (id && !findPerson(db, id)) errors.push({ path: f, message: "unknown person" });
  }
  if (!cityRef(db, body.address.city_id)) errors.push({ path: "address.city_id", message: "unknown city" });
  if (errors.length) throw invalidMany(errors);
  return { dates };
}

export function localColumns(body: ContractInput, dates: Record<DateField, string | null>) {
  return {
    customer_id: body.customer_id,
    billing_customer_id: body.billing_customer_id ?? body.customer_id,
    agent_id: body.agent_id ?? null,
    ...contractColumns(body, dates),
    ...addressColumns(body.address, body.address.city_id),
  };
}

// ---- connection settings ----

const UNIT: Record<string, number> = { k: 1e3, m: 1e6, g: 1e9 };
const rateBits = (r: string) => Number(r.slice(0, -1)) * UNIT[r.slice(-1).toLowerCase()];

/** Checks a config body beyond its schema: addresses and min ≤ max. */
export function checkConfigInput(body: ContractConfigInput): void {
  const errors: FieldError[] = [];
  if (body.ipv4 && !ipaddr.IPv4.isValidFourPartDecimal(body.ipv4)) errors.push({ path: "ipv4", message: "must be an IPv4 address" });
  if (body.ipv6) {
    const [addr, len, ...rest] = body.ipv6.split("/");
    const lenOk = len === undefined || (/^\d{1,3}$/.test(len) && Number(len) <= 128);
    if (rest.length || !lenOk || !ipaddr.IPv6.isValid(addr) || addr.includes(".")) errors.push({ path: "ipv6", message: "must be an IPv6 address or prefix" });
  }
  for (const [min, max] of [
    ["min_upload", "max_upload"],
    ["min_download", "max_download"],
  ] as const) {
    const a = body[min];
    const b = body[max];
    if (a && b && rateBits(a) > rateBits(b)) errors.push({ path: min, message: `must not exceed ${max}` });
  }
  if (errors.length) throw invalidMany(errors);
}

export function updateConfig(tx: Db, contractId: string, body: ContractConfigInput): void {
  const current = getConfig(tx, contractId);
  const username = body.username ?? current.username;
  if (usernameTaken(tx, username, contractId)) throw conflict("The username is taken by another contract");
  tx.update(contractConfigs)
    .set({
      username,
      password: body.password ?? current.password,
      min_upload: body.min_upload ?? null,
      max_upload: body.max_upload ?? null,
      min_download: body.min_download ?? null,
      max_download: body.max_download ?? null,
      pool_name_ipv4: body.pool_name_ipv4 ?? null,
      ipv4: body.ipv4 ?? null,
      poll_name_ipv6: body.poll_name_ipv6 ?? null,
      ipv6: body.ipv6 ?? null,
    })
    .where(eq(contractConfigs.contract_id, contractId))
    .run();
}

export interface ContractByUsername {
  contractId: string;
  contractStatus: string;
  /** The stored settings, password in clear (RADIUS CHAP needs it); never put it in a response. */
  config: Omit<ConfigRow, "contract_id">;
}

const byUsername = new WeakMap<object, ReturnType<typeof prepareByUsername>>();
function prepareByUsername(db: TenantDb) {
  return db
    .select({ config: contractConfigs, status: contracts.contract_status })
    .from(contractConfigs)
    .innerJoin(contracts, eq(contracts.id, contractConfigs.contract_id))
    .where(eq(contractConfigs.username, sql.placeholder("username")))
    .prepare();
}

/** For RADIUS: the contract whose connection username is `username` (unique per corporation). */
export function findContractByUsername(db: TenantDb, username: string): ContractByUsername | null {
  let stmt = byUsername.get(db.$client);
  if (!stmt) {
    stmt = prepareByUsername(db);
    byUsername.set(db.$client, stmt);
  }
  const row = stmt.get({ username });
  if (!row) return null;
  const { contract_id, ...config } = row.config;
  return { contractId: contract_id, contractStatus: row.status, config };
}

// ---- items ----

type ItemRow = typeof contractItems.$inferSelect;
const round = (n: number) => Math.round(n * 1e6) / 1e6;
export const itemView = (r: ItemRow): ContractItem => ({
  id: r.id,
  product_id: r.product_id,
  description: r.description,
  quantity: r.quantity,
  unit_price: r.unit_price,
  total: round(r.quantity * r.unit_price),
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export function itemsOf(db: Db, contractId: string): ContractItem[] {
  return db.select().from(contractItems).where(eq(contractItems.contract_id, contractId)).orderBy(asc(contractItems.position)).all().map(itemView);
}

