// The contract tables (contracts, contract_configs, contract_items, contract_flags): the view GET
// returns, the local rows' changes, connection settings, items and flags, and what other modules
// ask of contracts. The external-app upsert is in upsert.ts. Route operations take a read handle
// or a write transaction and its scope (src/core/store.ts); committed changes tell the contract
// watchers after the COMMIT.
import { and, asc, eq, inArray, or, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import ipaddr from "ipaddr.js";
import type { AppContext, ClassificationHolders, ContractChange, ContractNetwork, ContractNetworkHook } from "../../core/context";
import type { Principal } from "../../core/principal";
import type { TenantDoor, TenantWriteScope } from "../../core/store";
import type { Job } from "../../core/jobs";
import { readStamp, stampHolds } from "../../db/change-stamp";
import type { TenantDb } from "../../db/sqlite";
import { contractConfigs, contractFlags, contractItems, contracts } from "../../db/tenant/schema";
import { finite } from "../../lib/finite";
import { listRows, wordMatch, type ListParams, type ListSpec, type SearchWord } from "../../db/list";
import { MAX_MONEY } from "../../lib/schemas";
import { newId, randomBase62 } from "../../lib/ids";
import { conflict, invalid, invalidMany, notFound, type FieldError } from "../../lib/problem";
import { canonicalDate, dateAsMidnight, nowIso } from "../../lib/time";
import { unchanged } from "../../lib/unchanged";
import type { RawClient, RawStatement, TogetherRead } from "../../db/handle";
import { classificationIds, classificationNames } from "../classification/service";
import { productsByIds } from "../product/service";
import { ADDRESS_COLUMN_NAMES, addressColumns } from "../address/columns";
import { cityRef } from "../city/service";
import { clientOf, insertRowWrite, type RowCells, updateRowWrite } from "../../db/rows";
import { findApp, resolveApp } from "../externalapp/service";
import { identitiesOf, identityListField, linkedIdsOf, linkedRecordId, linkRecord, linkView } from "../externalapp/link-service";
import type { AddressInput, AddressView } from "../address/model";
import type { ExternalLinkView } from "../externalapp/model";
import { findPerson, personIdsByText, personIdsByWord, type Party } from "../person/service";
import {
  DATE_FIELDS,
  type Contract,
  ContractConfigInput,
  type ContractInput,
  type ContractItem,
  type ContractItemInput,
  type DateField,
  type FlagsBody,
} from "./model";

export type ContractRow = typeof contracts.$inferSelect;
export type ConfigRow = typeof contractConfigs.$inferSelect;
export const MASKED_PASSWORD = "********";

const json = (v: unknown): string | null => (v === undefined || v === null ? null : JSON.stringify(v));
const unjson = (v: string | null): unknown => (v === null ? null : JSON.parse(v));

export async function findContract(db: TenantDb, id: string): Promise<ContractRow | undefined> {
  return (await clientOf(db).query<ContractRow, [string]>("SELECT * FROM contracts WHERE id = ?1").get(id)) ?? undefined;
}

export async function getContract(db: TenantDb, id: string): Promise<ContractRow> {
  const row = await findContract(db, id);
  if (!row) throw notFound("Contract");
  return row;
}

export async function getConfig(db: TenantDb, contractId: string): Promise<ConfigRow> {
  return (await clientOf(db).query<ConfigRow, [string]>("SELECT * FROM contract_configs WHERE contract_id = ?1").get(contractId))!;
}

/** The contract's flags: the names of its classifications (from their owner), sorted. */
export async function flagNames(db: TenantDb, contractId: string): Promise<string[]> {
  const ids = (
    await clientOf(db)
      .query<{ id: string }, [string]>("SELECT classification_id AS id FROM contract_flags WHERE contract_id = ?1")
      .all(contractId)
  ).map((r) => r.id);
  return classificationNames(db, ids);
}

// A contract view in ONE statement: the contract, its config, the three parties with their
// address cities, the contract's address city and the flags (it used to be ten lookups, each a
// B-tree descent and a result object). Rows come back as arrays, read by the offsets below.
// The id is bound as `IN (?1)`: with `= ?1` SQLite spends ≈ 3× as long on the same joined plan.
//
// DELIBERATE READ-ONLY JOIN of other modules' tables (persons: person, cities: city,
// classifications: classification), the one exception to table ownership (issue 16): this is
// the hottest read (GET /api/contract/{id}, the upsert's answer, every contract event), and
// asking the owners for the parties, cities and flag names costs seven more statements. It only
// reads; the columns it names are those of PARTY_COLS, ADDRESS_COLS and CITY_COLS below, so a
// rename in persons or cities must be followed here (test/registry/contract-view.test.ts
// compares the view with the owners' own GET bodies).
const ADDRESS_COLS = ["address_line1", "address_line2", "address_district", "address_postal_code", "address_detail", "address_latitude", "address_longitude"] as const;
const CITY_COLS = ["id", "name", "state", "country"] as const;
const DATE_COLS = ["signature_date", "approval_date", "start_date", "end_date", "cancellation_date", "suspension_date"] as const;
const CONTRACT_COLS = ["id", "number", ...DATE_COLS, "total_value", "contract_status", "contract_stage", "json_original", "json_billing", "json_payment_method", "json_items", "created_at", "updated_at"] as const;
const CONFIG_COLS = ["username", "password", "min_upload", "max_upload", "min_download", "max_download", "pool_name_ipv4", "ipv4", "poll_name_ipv6", "ipv6", "allowance_gb", "throttle_max_upload", "throttle_max_download"] as const;
const PARTY_COLS = ["id", "name", "display_name", "tp_doc_identity", "doc_identity", "corporate"] as const;

const cols = (alias: string, names: readonly string[]) => names.map((c) => `${alias}.${c}`);
const partyCols = (p: string) => [...cols(p, PARTY_COLS), ...cols(p, ADDRESS_COLS), ...cols(`${p}c`, CITY_COLS)];
const partyJoin = (p: string, on: string) => `LEFT JOIN persons ${p} ON ${p}.id = c.${on} LEFT JOIN cities ${p}c ON ${p}c.id = ${p}.address_city_id`;
const VIEW_SQL = `SELECT ${[
  ...cols("c", CONTRACT_COLS),
  ...cols("c", ADDRESS_COLS),
  ...cols("ac", CITY_COLS),
  ...cols("cc", CONFIG_COLS),
  ...partyCols("p1"),
  ...partyCols("p2"),
  ...partyCols("p3"),
].join(", ")},
  (SELECT json_group_array(k.name) FROM contract_flags f JOIN classifications k ON k.id = f.classification_id WHERE f.contract_id = c.id)
FROM contracts c LEFT JOIN cities ac ON ac.id = c.address_city_id LEFT JOIN contract_configs cc ON cc.contract_id = c.id
  ${partyJoin("p1", "customer_id")} ${partyJoin("p2", "billing_customer_id")} ${partyJoin("p3", "agent_id")}
WHERE c.id IN (?1)`;

const ADDRESS_AT = CONTRACT_COLS.length;
const CITY_AT = ADDRESS_AT + ADDRESS_COLS.length;
const CONFIG_AT = CITY_AT + CITY_COLS.length;
const PARTY_AT = CONFIG_AT + CONFIG_COLS.length;
const PARTY_WIDTH = PARTY_COLS.length + ADDRESS_COLS.length + CITY_COLS.length;
const FLAGS_AT = PARTY_AT + 3 * PARTY_WIDTH;
type Cell = string | number | null;
const text = (v: Cell[], i: number) => v[i] as string;
const textOrNull = (v: Cell[], i: number) => v[i] as string | null;

/** The address whose columns start at `a` and whose city's start at `c`; null as addressView gives it. */
function addressAt(v: Cell[], a: number, c: number): AddressView | null {
  if (v[a] === null || v[c] === null) return null;
  return {
    line1: text(v, a),
    line2: textOrNull(v, a + 1),
    district: textOrNull(v, a + 2),
    postal_code: textOrNull(v, a + 3),
    detail: textOrNull(v, a + 4),
    latitude: finite(v[a + 5] as number | null),
    longitude: finite(v[a + 6] as number | null),
    city: { id: text(v, c), name: text(v, c + 1), state: text(v, c + 2), country: text(v, c + 3) },
  };
}

function partyAt(v: Cell[], o: number): Party | null {
  if (v[o] === null) return null;
  return {
    id: text(v, o),
    name: text(v, o + 1),
    display_name: textOrNull(v, o + 2),
    tp_doc_identity: textOrNull(v, o + 3),
    doc_identity: textOrNull(v, o + 4),
    corporate: v[o + 5] === 1,
    address: addressAt(v, o + PARTY_COLS.length, o + PARTY_COLS.length + ADDRESS_COLS.length),
  };
}

const SURROGATE = /[\ud800-\udfff]/;
/** SQLite's BINARY order (UTF-8 bytes, i.e. code points); JS's `<` agrees unless a surrogate pair is involved. */
const binaryOrder = (a: string, b: string) =>
  SURROGATE.test(a) || SURROGATE.test(b) ? Buffer.compare(Buffer.from(a), Buffer.from(b)) : a < b ? -1 : a > b ? 1 : 0;

/** Flag names sorted here: an ORDER BY inside the aggregate opens a sorter even for none (≈ 3 µs). */
function flagsAt(v: Cell[]): string[] {
  const names = JSON.parse(text(v, FLAGS_AT)) as string[];
  return names.length > 1 ? names.sort(binaryOrder) : names;
}

const unjsonAt = (v: Cell[], i: number) => unjson(v[i] as string | null);

// bun:sqlite's own statement cache is keyed by the SQL text, and finding this long text in it
// costs ≈ 2 µs a read (a fifth of the view): each database keeps its statement here instead.
const viewStatements = new WeakMap<RawClient, RawStatement<Record<string, never>, [string]>>();
function viewStatement(client: RawClient): RawStatement<Record<string, never>, [string]> {
  let stmt = viewStatements.get(client);
  if (!stmt) viewStatements.set(client, (stmt = client.query<Record<string, never>, [string]>(VIEW_SQL)));
  return stmt;
}

/** The Contract as GET returns it, or null when there is none; the password in clear only when `revealPassword`. */
export async function contractViewById(net: ContractNetworkHook | null, db: TenantDb, id: string, timeZone: string, revealPassword = false): Promise<Contract | null> {
  return (await freshContractView(net, db, id, timeZone, revealPassword))?.view ?? null;
}

/** The view, and the instant its `network` stops being true without a write (the body cache's bound). */
async function freshContractView(net: ContractNetworkHook | null, db: TenantDb, id: string, timeZone: string, revealPassword = false): Promise<{ view: Contract; freshUntil: number } | null> {
  return (await freshContractViews(net, db, [id], timeZone, revealPassword))[0] ?? null;
}

/**
 * ctx.contractNetwork, which the view needs for Contract.network (the ISP module sets it; its
 * callers pass it, the ISP's own code its hook): read when asked, as modules are built in turn.
 */
function networkHook(net: ContractNetworkHook | null): ContractNetworkHook {
  if (!net) throw new Error("the contract view needs ctx.contractNetwork, which the ISP module sets");
  return net;
}

/** The views of contracts that exist among `ids`, in order, their networks read together (ctx.contractNetwork). */
async function freshContractViews(net: ContractNetworkHook | null, db: TenantDb, ids: string[], timeZone: string, revealPassword = false): Promise<{ view: Contract; freshUntil: number }[]> {
  const cells: Cell[][] = [];
  for (const id of ids) {
    const v = (await viewStatement(clientOf(db)).values(id))[0] as Cell[] | undefined;
    if (v) cells.push(v);
  }
  const allowance = (v: Cell[]) => finite(v[CONFIG_AT + 10] as number | null);
  const networks = await networkHook(net).networks(
    db,
    cells.map((v) => ({ id: text(v, 0), contract_status: text(v, 9), suspension_date: textOrNull(v, 7), allowance_gb: allowance(v) })),
    timeZone,
    Date.now(),
  );
  return cells.map((v, i) => ({ view: viewOf(v, timeZone, revealPassword, networks[i].network), freshUntil: networks[i].freshUntil }));
}

function viewOf(v: Cell[], timeZone: string, revealPassword: boolean, network: ContractNetwork): Contract {
  const date = (i: number) => dateAsMidnight(textOrNull(v, 2 + i), timeZone);
  const k = CONFIG_AT;
  const allowanceGb = finite(v[k + 10] as number | null);
  const view: Contract = {
    id: text(v, 0),
    customer: partyAt(v, PARTY_AT)!,
    billing_customer: partyAt(v, PARTY_AT + PARTY_WIDTH)!,
    agent: partyAt(v, PARTY_AT + 2 * PARTY_WIDTH),
    number: text(v, 1),
    signature_date: date(0),
    approval_date: date(1),
    start_date: date(2)!,
    end_date: date(3),
    cancellation_date: date(4),
    suspension_date: date(5),
    address: addressAt(v, ADDRESS_AT, CITY_AT),
    total_value: finite(v[8] as number),
    contract_status: text(v, 9),
    contract_stage: text(v, 10),
    original: unjsonAt(v, 11),
    billing: unjsonAt(v, 12),
    payment_method: unjsonAt(v, 13),
    items: unjsonAt(v, 14),
    config: {
      username: text(v, k),
      password: revealPassword ? text(v, k + 1) : MASKED_PASSWORD,
      min_upload: textOrNull(v, k + 2),
      max_upload: textOrNull(v, k + 3),
      min_download: textOrNull(v, k + 4),
      max_download: textOrNull(v, k + 5),
      pool_name_ipv4: textOrNull(v, k + 6),
      ipv4: textOrNull(v, k + 7),
      poll_name_ipv6: textOrNull(v, k + 8),
      ipv6: textOrNull(v, k + 9),
      allowance_gb: allowanceGb,
      throttle_max_upload: textOrNull(v, k + 11),
      throttle_max_download: textOrNull(v, k + 12),
    },
    network,
    flags: flagsAt(v),
    created_at: text(v, 15),
    updated_at: text(v, 16),
  };
  return view;
}

export async function getContractView(net: ContractNetworkHook | null, db: TenantDb, id: string, timeZone: string, revealPassword = false): Promise<Contract> {
  const view = await contractViewById(net, db, id, timeZone, revealPassword);
  if (!view) throw notFound("Contract");
  return view;
}

// GET /api/contract/{id} answers the same bytes until the tenant database changes: the JSON text
// is kept per change stamp (src/db/change-stamp.ts readStamp: SQLite's stamp of the READ
// connection, PostgreSQL's generation of the corporation), time zone and id; texts of an older
// stamp are never read again. Never inside a write, whose changes may still roll back without
// moving the stamp back (the stamp is null there). One bound for all corporations,
// in entries and in characters: a contract with hundreds of items makes a body of hundreds of kB,
// and 8,192 of those would hold gigabytes.
const BODIES_MAX = 8192;
/** ≈ 16 MB of ASCII text: 8,192 bodies of a typical contract (≈ 2 kB) fit, as they did before. */
const BODIES_MAX_CHARS = 16 * 1024 * 1024;
/**
 * Each body with the instant its network part stops being true without a write (a cycle's end, a
 * grace's end) and when it was last answered. A body not answered for BODIES_IDLE_MS is dropped (a
 * sweep every half of it): once the stamp moved (any write of the corporation on SQLite) its texts
 * are never read again, and were held until the bound was reached (measured: the bench's 5,000
 * bodies, ≈ 15 MB, held through every later row; docs/architecture.md "Memory under load"). Ten
 * seconds, not a minute: what is live is doubled by the heap's next growth (JavaScriptCore grows
 * it to about twice what a full collection kept), so 15 MB kept idle read ≈ 30 MB more RSS in
 * the rows after, while a body read again later costs one read.
 */
const bodies = new Map<string, { text: string; until: number; usedAt: number }>();
let bodiesChars = 0;
const BODIES_IDLE_MS = 10_000;

function keptBody(key: string): string | undefined {
  const kept = bodies.get(key);
  if (kept === undefined) return undefined;
  const now = Date.now();
  if (now >= kept.until) return undefined;
  kept.usedAt = now;
  return kept.text;
}

/** Drops the bodies not answered for BODIES_IDLE_MS by `now`, and those no longer true. */
export function sweepContractBodies(now = Date.now()): void {
  for (const [key, kept] of bodies) {
    if (now - kept.usedAt < BODIES_IDLE_MS && now < kept.until) continue;
    bodies.delete(key);
    bodiesChars -= kept.text.length;
  }
}

/** The sweep's job (contractModule registers it: started with the app, stopped at close). */
export const CONTRACT_BODIES_JOB = "contract-bodies";
export const CONTRACT_BODIES_EVERY_MS = BODIES_IDLE_MS / 2;
export function contractBodiesJob(track: (pass: () => Promise<unknown>) => Promise<unknown>): Job {
  let timer: ReturnType<typeof setInterval> | null = null;
  const sweep = async () => sweepContractBodies();
  return {
    name: CONTRACT_BODIES_JOB,
    start() {
      // An idle app's sweeps record nothing: a pass is tracked only when bodies are held.
      timer = setInterval(() => {
        if (bodies.size) track(sweep).catch(() => {});
      }, CONTRACT_BODIES_EVERY_MS);
      timer.unref?.();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
    },
    runOnce: sweep,
  };
}

/** The keys of the bodies kept now (tests). */
export function keptContractBodies(): string[] {
  return [...bodies.keys()];
}

/**
 * GET /api/contract/{id}'s body: where the door knows its stamp without reading (PostgreSQL), a
 * body kept for it is answered with no transaction at all; else contractViewJson in a read.
 */
export async function contractViewText(net: ContractNetworkHook | null, tenant: TenantDoor, id: string, timeZone: string): Promise<string> {
  const stamp = tenant.stampNow?.();
  if (stamp !== undefined) {
    const body = keptBody(`${stamp} ${timeZone} ${id}`);
    if (body !== undefined) return body;
  }
  return tenant.read((db) => contractViewJson(net, db, id, timeZone));
}

/**
 * The JSON text of the Contract GET returns (password masked); throws 404 as getContractView does.
 * Called with the handle of a `read`; a handle without a stamp (a write's) builds the body every
 * time. On PostgreSQL a body read while a write of the corporation ended is answered, not kept.
 */
export async function contractViewJson(net: ContractNetworkHook | null, db: TenantDb, id: string, timeZone: string): Promise<string> {
  const stamp = readStamp(db);
  if (stamp === null) return JSON.stringify(await getContractView(net, db, id, timeZone));
  const key = `${stamp} ${timeZone} ${id}`;
  let body = keptBody(key);
  if (body === undefined) {
    const fresh = await freshContractView(net, db, id, timeZone);
    if (!fresh) throw notFound("Contract");
    body = JSON.stringify(fresh.view);
    if (!stampHolds(db, stamp)) return body;
    if (bodies.size >= BODIES_MAX || bodiesChars + body.length > BODIES_MAX_CHARS) {
      bodies.clear();
      bodiesChars = 0;
    }
    bodies.set(key, { text: body, until: fresh.freshUntil, usedAt: Date.now() });
    bodiesChars += body.length;
  }
  return body;
}

/** The views of the contracts of a list page, in its order (each read again, whole, in the one statement above). */
async function contractViews(net: ContractNetworkHook | null, db: TenantDb, ids: string[], timeZone: string): Promise<Contract[]> {
  return (await freshContractViews(net, db, ids, timeZone)).map((f) => f.view);
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

/**
 * The contract holding `number` (409 when it is another than `exceptId`). When the number is
 * unchanged that is the contract being updated, so the upsert compares with it for free.
 */
export async function numberHolder(db: TenantDb, number: string, exceptId: string | null, read?: Promise<ContractRow | null>): Promise<ContractRow | null> {
  const row = await (read ?? contractByNumber(db, number));
  if (row && row.id !== exceptId) throw conflict("The contract number is used by another contract");
  return row;
}

/** The contract holding `number`, or null (numberHolder's read, which a caller may start early). */
export async function contractByNumber(db: TenantDb, number: string): Promise<ContractRow | null> {
  const read = contractByNumberRead(number);
  return await clientOf(db).query<ContractRow>(read.sql).get(...read.params);
}

/** contractByNumber's statement, for a caller that reads it together with others (readTogether). */
export const contractByNumberRead = (number: string): TogetherRead => ({ sql: "SELECT * FROM contracts WHERE number = ?1", params: [number] });

/** A contract's connection settings row, or null (contractConnection's read, which a caller may start early). */
export async function configRowOf(db: TenantDb, contractId: string): Promise<ConfigRow | null> {
  const read = configRowRead(contractId);
  return await clientOf(db).query<ConfigRow>(read.sql).get(...read.params);
}

/** configRowOf's statement, for a caller that reads it together with others (readTogether). */
export const configRowRead = (contractId: string): TogetherRead => ({ sql: "SELECT * FROM contract_configs WHERE contract_id = ?1", params: [contractId] });

async function usernameTaken(db: TenantDb, username: string, exceptContractId: string | null): Promise<boolean> {
  const row = await clientOf(db).query<{ id: string }, [string]>("SELECT contract_id AS id FROM contract_configs WHERE username = ?1").get(username);
  return !!row && row.id !== exceptContractId;
}

/** A new contract's connection settings: username = number (or the id when taken), random password (returned). */
export async function insertDefaultConfig(tx: TenantDb, contractId: string, number: string): Promise<string> {
  const { password, write } = defaultConfigWrite(contractId, number);
  await clientOf(tx).query(write.sql).run(...write.params);
  return password;
}

/**
 * insertDefaultConfig's statement and the password it sets, for a caller that sends it with others
 * (writeTogether: it reads contract_configs, so none of the others may write there).
 */
export function defaultConfigWrite(contractId: string, number: string): { password: string; write: TogetherRead } {
  const password = randomBase62(12);
  // One statement: the username is the number unless another contract has it (then the id).
  const sql =
    "INSERT INTO contract_configs (contract_id, username, password) " +
    "SELECT ?1, CASE WHEN EXISTS (SELECT 1 FROM contract_configs WHERE username = ?2) THEN ?1 ELSE ?2 END, ?3";
  return { password, write: { sql, params: [contractId, number, password] } };
}

/** The local input's ids must name existing records: 400 naming each unknown one. */
async function checkLocalInput(db: TenantDb, body: ContractInput): Promise<{ dates: Record<DateField, string | null> }> {
  const errors: FieldError[] = [];
  const dates = checkDates(body, errors);
  for (const f of ["customer_id", "billing_customer_id", "agent_id"] as const) {
    const id = body[f];
    if (id && !(await findPerson(db, id))) errors.push({ path: f, message: "unknown person" });
  }
  if (!(await cityRef(db, body.address.city_id))) errors.push({ path: "address.city_id", message: "unknown city" });
  if (errors.length) throw invalidMany(errors);
  return { dates };
}

function localColumns(body: ContractInput, dates: Record<DateField, string | null>) {
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

/** Every writable field of the connection settings, as the request schema declares them (read at
 * call time: model.ts is still being evaluated when this module loads, through an import circle). */
const configFields = (): (keyof ContractConfigInput)[] => Object.keys(ContractConfigInput.properties) as (keyof ContractConfigInput)[];

/**
 * The connection settings a POST .../config leaves (routes.md, ContractConfig): a field present in
 * the body takes its value and null clears it; a field left out keeps the stored one. The
 * credentials are never cleared: username and password left out or null keep theirs. Generic over
 * the schema's fields, so a field added to ContractConfigInput follows the same rule.
 */
function mergedConfig(current: ConfigRow, body: ContractConfigInput): Omit<ConfigRow, "contract_id"> {
  const { contract_id: _, ...next } = current;
  const row = next as Record<string, unknown>;
  for (const field of configFields()) {
    const value = body[field];
    if (value === undefined || !(field in row)) continue;
    row[field] = value;
  }
  next.username = body.username ?? current.username;
  next.password = body.password ?? current.password;
  return next;
}

/** Checks the settings as they would be stored, beyond the schema: addresses, and min ≤ max (a min
 * sent alone is checked against the stored max). */
function checkConfigInput(body: Omit<ConfigRow, "contract_id">): void {
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
  // Fair use slows a contract down to its throttle speeds: an allowance without them would throttle to nothing.
  if (body.allowance_gb != null) {
    for (const f of ["throttle_max_upload", "throttle_max_download"] as const) if (!body[f]) errors.push({ path: f, message: "is required while allowance_gb is set" });
  }
  if (errors.length) throw invalidMany(errors);
}

/** Writes the connection settings; false (and nothing written) when they are already these. */
async function updateConfig(tx: TenantDb, contractId: string, body: ContractConfigInput): Promise<boolean> {
  const current = await getConfig(tx, contractId);
  const columns = mergedConfig(current, body);
  checkConfigInput(columns);
  if (unchanged(current, columns)) return false;
  if (columns.username !== current.username && (await usernameTaken(tx, columns.username, contractId))) throw conflict("The username is taken by another contract");
  await tx.update(contractConfigs).set(columns).where(eq(contractConfigs.contract_id, contractId)).run();
  return true;
}

/** What RADIUS renders for a contract: its fields and connection settings (see ContractByUsername). */
export type ContractConnection = ContractByUsername;

/**
 * The contract's connection state now, or null when there is no such contract. `row`: the
 * contract's row as the caller has just read it in this transaction (the upsert's number holder),
 * which spares reading it again; `configRead`: its connection settings' read, when the caller started it
 * early (the upsert sends its reads together).
 */
export async function contractConnection(db: TenantDb, contractId: string, row?: ContractRow | null, configRead?: Promise<ConfigRow | null>): Promise<ContractConnection | null> {
  const c = row?.id === contractId ? row : await findContract(db, contractId);
  if (!c) {
    configRead?.catch(() => {});
    return null;
  }
  // Raw, as findContract: the upsert takes this snapshot on every update.
  const configRow = await (configRead ?? configRowOf(db, contractId));
  if (!configRow) return null;
  const { contract_id: _, ...config } = configRow;
  return { contract: { id: c.id, number: c.number, contract_status: c.contract_status, contract_stage: c.contract_stage, customer_id: c.customer_id }, config };
}

/** Every contract's static addresses (connection settings ipv4/ipv6; ipv6 may be a prefix). */
export async function staticAddresses(db: TenantDb): Promise<{ contract_id: string; ipv4: string | null; ipv6: string | null }[]> {
  return await clientOf(db)
    .query<{ contract_id: string; ipv4: string | null; ipv6: string | null }, []>("SELECT contract_id, ipv4, ipv6 FROM contract_configs WHERE ipv4 IS NOT NULL OR ipv6 IS NOT NULL")
    .all();
}

/** Tells the context's contract watchers (the ISP module's RADIUS sessions) of a committed change. */
export function contractChanged(ctx: AppContext, change: ContractChange): void {
  for (const w of ctx.contractWatchers) {
    try {
      w(change);
    } catch (err) {
      ctx.logger.error("a contract watcher failed", { error: String(err) });
    }
  }
}

/** The contract fields RADIUS needs, and its stored settings (password in clear: CHAP needs it). */
export interface ContractByUsername {
  contract: Pick<ContractRow, "id" | "number" | "contract_status" | "contract_stage" | "customer_id">;
  /** Never put the password in a response. */
  config: Omit<ConfigRow, "contract_id">;
}

// RADIUS looks contracts up by connection user name on every Access-Request: two single-table
// reads prepared once per connection (bun:sqlite runs a two-table join several µs slower than two
// unique-index reads, and the whole contract row carries its JSON documents).
interface ByUsernameStatements {
  config: RawStatement<ConfigRow, [string]>;
  contract: RawStatement<ContractByUsername["contract"], [string]>;
}
const byUsername = new WeakMap<RawClient, ByUsernameStatements>();

function byUsernameStatements(db: TenantDb): ByUsernameStatements {
  const client = clientOf(db);
  let s = byUsername.get(client);
  if (!s) {
    s = {
      config: client.query("SELECT * FROM contract_configs WHERE username = ?1"),
      contract: client.query("SELECT id, number, contract_status, contract_stage, customer_id FROM contracts WHERE id = ?1"),
    };
    byUsername.set(client, s);
  }
  return s;
}

/** The id of the contract whose connection user name is `username` (unique per corporation). */
export async function contractIdByUsername(db: TenantDb, username: string): Promise<string | null> {
  return (await byUsernameStatements(db).config.get(username))?.contract_id ?? null;
}

/** The contract whose connection user name is `username`, with its settings. */
export async function findContractByUsername(db: TenantDb, username: string): Promise<ContractByUsername | null> {
  const s = byUsernameStatements(db);
  const row = await s.config.get(username);
  if (!row) return null;
  const contract = await s.contract.get(row.contract_id);
  if (!contract) return null;
  const { contract_id: _, ...config } = row;
  return { contract, config };
}

// ---- items ----

type ItemRow = typeof contractItems.$inferSelect;
const round = (n: number) => Math.round(n * 1e6) / 1e6;
const itemView = (r: ItemRow): ContractItem => ({
  id: r.id,
  product_id: r.product_id,
  description: r.description,
  quantity: finite(r.quantity),
  unit_price: finite(r.unit_price),
  total: finite(round(r.quantity * r.unit_price)),
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/**
 * The contract as its history compares it (core/history.ts): its columns, its connection settings
 * under `config.` (the password masked there), its items by position and its flags.
 */
async function contractRecord(db: TenantDb, id: string): Promise<object> {
  const row = await findContract(db, id);
  if (!row) return {};
  const { contract_id: _, ...config } = (await configRowOf(db, id)) ?? { contract_id: "" };
  const items = (await itemsOf(db, id)).map((i) => ({ product_id: i.product_id, description: i.description, quantity: i.quantity, unit_price: i.unit_price }));
  return { ...row, config, items, flags: await flagNames(db, id) };
}

async function itemsOf(db: TenantDb, contractId: string): Promise<ContractItem[]> {
  return (await db.select().from(contractItems).where(eq(contractItems.contract_id, contractId)).orderBy(asc(contractItems.position)).all()).map(itemView);
}

/**
 * Gives every contract flagged with `classificationId` a new `updated_at` (the classification is
 * renamed or deleted) and returns their ids in order, for one UPDATE event each.
 */
async function touchContractsFlaggedAs(tx: TenantDb, classificationId: string, at: string): Promise<string[]> {
  const client = clientOf(tx);
  const ids = (
    await client
      .query<{ id: string }, [string]>("SELECT contract_id AS id FROM contract_flags WHERE classification_id = ?1 ORDER BY contract_id")
      .all(classificationId)
  ).map((r) => r.id);
  if (ids.length) {
    await client.query("UPDATE contracts SET updated_at = ?1 WHERE id IN (SELECT contract_id FROM contract_flags WHERE classification_id = ?2)").run(at, classificationId);
  }
  return ids;
}

/**
 * The contracts flagged with a classification about to be renamed or deleted
 * (ctx.classificationHolders): each gets a new `updated_at` and an UPDATE event now, its Change
 * once the change is done.
 */
export const contractClassificationHolders =
  (ctx: AppContext): ClassificationHolders =>
  async (tx, w, classificationId, timeZone) => {
  const ids = await touchContractsFlaggedAs(tx, classificationId, nowIso());
  const before: string[][] = [];
  for (const id of ids) before.push(await flagNames(tx, id));
  for (const id of ids) w.emit("CONTRACT_AFTER_UPDATE", id, (t: TenantDb) => getContractView(ctx.contractNetwork, t, id, timeZone));
  return async () => {
    for (const [i, id] of ids.entries()) {
      w.record({ type: "contract", id, action: "flags", before: { flags: before[i] }, after: { flags: await flagNames(tx, id) } });
    }
  };
};

/** Whether a person is the customer, billing customer or agent of any contract (its delete is refused then). */
export async function personIsParty(db: TenantDb, id: string): Promise<boolean> {
  return !!(await db
    .select({ id: contracts.id })
    .from(contracts)
    .where(or(eq(contracts.customer_id, id), eq(contracts.billing_customer_id, id), eq(contracts.agent_id, id)))
    .limit(1)
    .get());
}

/** Whether any contract's address names the city (the city delete is refused then). */
export async function contractsUseCity(db: TenantDb, cityId: string): Promise<boolean> {
  return !!(await db.select({ id: contracts.id }).from(contracts).where(eq(contracts.address_city_id, cityId)).limit(1).get());
}

/** The columns the external-app upsert writes: everything but the id and timestamps. */
export type UpsertColumns = RowCells<typeof contracts>;

/** Inserts a contract from an external-app upsert: the statement and the new contract's id (sent with others: writeTogether). */
export function addContractWrite(columns: UpsertColumns): { id: string; write: TogetherRead } {
  const id = newId();
  const at = nowIso();
  return { id, write: insertRowWrite(contracts, { id, ...columns, created_at: at, updated_at: at }) };
}

/** Overwrites a contract's columns from an external-app upsert (`was`: its row as read in this write: only what differs is set). */
export function setContractWrite(id: string, columns: UpsertColumns, was?: object): TogetherRead {
  return updateRowWrite(contracts, id, columns, was);
}

/** Whether any contract item names the product (its delete is refused then). */
export async function productOnContractItems(db: TenantDb, productId: string): Promise<boolean> {
  return !!(await db.select({ id: contractItems.id }).from(contractItems).where(eq(contractItems.product_id, productId)).limit(1).get());
}

// ---- the routes' operations ----

// ?q finds a contract by its number, its PPPoE username and config addresses (contract_configs),
// its customer's name, display name and document (persons, the document also by its digits), and
// the framed address and MAC of its online sessions (isp). contracts_fts indexes the number and the
// username (migration 0012); the customer's text is found through the persons' own index, so a
// person's rename changes no contract's index entry and the upsert writes no index entry for it.
// Addresses are scanned (few rows: one config per contract, the online sessions), only for words
// that can be part of one (addressWord); the online sessions' through ctx.contractNetwork.

/** A word of a ?q that can be part of an IP address or a MAC: only such words look in addresses. */
export function addressWord(word: SearchWord): boolean {
  return /^[0-9a-f.:/-]+$/i.test(word.text);
}

function configIdsByAddress(match: (c: SQLiteColumn) => SQL, word: SearchWord): SQL | undefined {
  if (!addressWord(word)) return undefined;
  return sql`(SELECT ${contractConfigs.contract_id} FROM ${contractConfigs} WHERE ${match(contractConfigs.ipv4)} OR ${match(contractConfigs.ipv6)})`;
}
/** The list's ?q and search (the online sessions' addresses from ctx.contractNetwork, when set). */
const listSpec = (net: ContractNetworkHook | null): ListSpec => ({
  q: [contracts.number],
  qMore: [
    (match) => sql`${contracts.id} IN (SELECT ${contractConfigs.contract_id} FROM ${contractConfigs} WHERE ${match(contractConfigs.username)})`,
    (match, word) => sql`${contracts.customer_id} IN ${personIdsByText(match, word)}`,
    (match, word) => {
      const ids = [configIdsByAddress(match, word), net?.onlineAddressIds(match, word, nowIso())].filter((s) => s !== undefined);
      return ids.length ? or(...ids.map((s) => sql`${contracts.id} IN ${s}`)) : undefined;
    },
  ],
  search: "contracts_fts",
  searchMore: [
    (word) => sql`SELECT rowid FROM contracts WHERE customer_id IN ${personIdsByWord(word)}`,
    (word) => {
      const match = wordMatch(word.text, true);
      const ids = [configIdsByAddress(match, word), net?.onlineAddressIds(match, word, nowIso())].filter((s) => s !== undefined);
      return ids.length ? sql`SELECT rowid FROM contracts WHERE ${or(...ids.map((s) => sql`id IN ${s}`))}` : undefined;
    },
  ],
  hidden: [...ADDRESS_COLUMN_NAMES, "json_original", "json_billing", "json_payment_method", "json_items"],
});

const tzOf = (p: Principal) => p.corp.timezone;

/**
 * Contract dates are stored as `YYYY-MM-DD` but shown as midnight in the corporation's timezone:
 * a date filter accepts either form (a date-time's date part is used, as in request bodies).
 */
function listQuery(query: ListParams): ListParams {
  const out = { ...query };
  for (const f of DATE_FIELDS) {
    const raw = out[f];
    if (raw === undefined) continue;
    const text = Array.isArray(raw) ? String(raw[raw.length - 1]) : String(raw);
    const date = canonicalDate(text);
    if (!date) throw invalid(f, "must be a date, YYYY-MM-DD");
    out[f] = date;
  }
  return out;
}

async function listContracts(net: ContractNetworkHook | null, db: TenantDb, principal: Principal, query: ListParams) {
  const page = await listRows(db, contracts, listSpec(net), listQuery(query), (r: ContractRow) => r.id);
  return { ...page, items: await contractViews(net, db, page.items, tzOf(principal)) };
}

type AppParams = { externalAppId?: string; externalAppName?: string };

/** The contracts linked to an app, each with its identity. */
async function listLinkedContracts(net: ContractNetworkHook | null, db: TenantDb, principal: Principal, params: AppParams, query: ListParams) {
  const app = await resolveApp(db, principal, params);
  const page = await listRows(
    db,
    contracts,
    { ...listSpec(net), computed: identityListField(app.id, "contract", contracts.id) },
    listQuery(query),
    (r: ContractRow) => r.id,
    [inArray(contracts.id, linkedIdsOf(db, app.id, "contract"))],
  );
  const views = await contractViews(net, db, page.items, tzOf(principal));
  const identities = await identitiesOf(db, app.id, "contract", page.items);
  return { ...page, items: views.map((c) => ({ ...c, identity: identities.get(c.id)! })) };
}

async function contractByIdentity(net: ContractNetworkHook | null, db: TenantDb, principal: Principal, params: AppParams & { identity: string }) {
  const app = await resolveApp(db, principal, params);
  const id = await linkedRecordId(db, app.id, "contract", params.identity);
  if (!id) throw notFound("Contract");
  return { ...(await getContractView(net, db, id, tzOf(principal))), identity: params.identity };
}

/** A local create; the answer shows the generated password, the event does not. */
async function createContract(net: ContractNetworkHook | null, tx: TenantDb, w: TenantWriteScope, principal: Principal, body: ContractInput): Promise<Contract> {
  const { dates } = await checkLocalInput(tx, body);
  await numberHolder(tx, body.number, null);
  const id = (await tx.insert(contracts).values(localColumns(body, dates)).returning({ id: contracts.id }).get()).id;
  await insertDefaultConfig(tx, id, body.number);
  w.record({ type: "contract", id, action: "create", before: null, after: await contractRecord(tx, id) });
  const view = await getContractView(net, tx, id, tzOf(principal), true);
  w.emit("CONTRACT_AFTER_INSERT", id, { ...view, config: { ...view.config, password: MASKED_PASSWORD } });
  return view;
}

/**
 * A change to one contract: `change` writes and says whether it changed anything. If it did, the
 * contract gets a new `updated_at`, CONTRACT_AFTER_UPDATE fires with its new view and, after the
 * commit, the contract watchers hear of it (RADIUS sessions: disconnect or CoA).
 */
async function changeContract(
  ctx: AppContext,
  tx: TenantDb,
  w: TenantWriteScope,
  principal: Principal,
  id: string,
  action: string,
  change: (row: ContractRow) => Promise<boolean>,
): Promise<boolean> {
  const row = await getContract(tx, id);
  const before = await contractConnection(tx, id);
  const was = await contractRecord(tx, id);
  if (!(await change(row))) return false;
  await tx.update(contracts).set({ updated_at: nowIso() }).where(eq(contracts.id, id)).run();
  w.record({ type: "contract", id, action, before: was, after: await contractRecord(tx, id) });
  const tz = tzOf(principal);
  w.emit("CONTRACT_AFTER_UPDATE", id, (t: TenantDb) => getContractView(ctx.contractNetwork, t, id, tz));
  const event: ContractChange = { corpId: principal.corpId, contractId: id, before, actorUserId: principal.userId, ip: principal.ip };
  w.afterCommit(() => contractChanged(ctx, event));
  return true;
}

async function updateContract(ctx: AppContext, tx: TenantDb, w: TenantWriteScope, principal: Principal, id: string, body: ContractInput): Promise<Contract> {
  await getContract(tx, id);
  const { dates } = await checkLocalInput(tx, body);
  await changeContract(ctx, tx, w, principal, id, "update", async (row) => {
    const columns = localColumns(body, dates);
    // The body as stored (dates, JSON text, left-out fields as null) is what it has: no change.
    if (unchanged(row, columns)) return false;
    await numberHolder(tx, body.number, id);
    await tx.update(contracts).set(columns).where(eq(contracts.id, id)).run();
    return true;
  });
  return await getContractView(ctx.contractNetwork, tx, id, tzOf(principal));
}

/** Links the contract to an app's identity (no event: link operations fire none, routes.md). */
async function linkContract(tx: TenantDb, w: TenantWriteScope, id: string, body: { external_app_id: string; identity: string }): Promise<ExternalLinkView> {
  await getContract(tx, id);
  if (!(await findApp(tx, { id: body.external_app_id }))) throw invalid("external_app_id", "unknown external application");
  const was = (await identitiesOf(tx, body.external_app_id, "contract", [id])).get(id) ?? null;
  await linkRecord(tx, body.external_app_id, "contract", id, body.identity);
  const field = `externalapp.${body.external_app_id}`;
  w.record({ type: "contract", id, action: "link", before: { [field]: was }, after: { [field]: body.identity } });
  return await linkView(tx, body.external_app_id, "contract", id);
}

async function setContractAddress(ctx: AppContext, tx: TenantDb, w: TenantWriteScope, principal: Principal, id: string, body: AddressInput): Promise<Contract> {
  await getContract(tx, id);
  if (!(await cityRef(tx, body.city_id))) throw invalid("city_id", "unknown city");
  await changeContract(ctx, tx, w, principal, id, "address", async (row) => {
    const columns = addressColumns(body, body.city_id);
    if (unchanged(row, columns)) return false;
    await tx.update(contracts).set(columns).where(eq(contracts.id, id)).run();
    return true;
  });
  return await getContractView(ctx.contractNetwork, tx, id, tzOf(principal));
}

/** ACTIVE or INACTIVE (from either or SUSPENDED); 409 for a cancelled contract. */
async function setContractStatus(ctx: AppContext, tx: TenantDb, w: TenantWriteScope, principal: Principal, id: string, target: "ACTIVE" | "INACTIVE"): Promise<Contract> {
  await changeContract(ctx, tx, w, principal, id, "status", async (row) => {
    if (row.contract_status === "CANCELLED") throw conflict("The contract is cancelled");
    if (row.contract_status === target) return false;
    await tx.update(contracts).set({ contract_status: target }).where(eq(contracts.id, id)).run();
    return true;
  });
  return await getContractView(ctx.contractNetwork, tx, id, tzOf(principal));
}

async function setContractConfig(ctx: AppContext, tx: TenantDb, w: TenantWriteScope, principal: Principal, id: string, body: ContractConfigInput): Promise<Contract> {
  await getContract(tx, id);
  await changeContract(ctx, tx, w, principal, id, "config", () => updateConfig(tx, id, body));
  // The password is in clear only when this request set it.
  return await getContractView(ctx.contractNetwork, tx, id, tzOf(principal), body.password != null);
}

async function contractItemList(db: TenantDb, id: string): Promise<{ items: ContractItem[] }> {
  await getContract(db, id);
  return { items: await itemsOf(db, id) };
}

/** Replaces the items; a product left out of an item gives its name and price. */
async function setContractItems(ctx: AppContext, tx: TenantDb, w: TenantWriteScope, principal: Principal, id: string, items: ContractItemInput[]): Promise<{ items: ContractItem[] }> {
  await getContract(tx, id);
  const found = await productsByIds(tx, items.map((i) => i.product_id));
  const errors: FieldError[] = [];
  items.forEach((i, n) => {
    const product = found.get(i.product_id);
    if (!product) errors.push({ path: `items.${n}.product_id`, message: "unknown product" });
    // A price stored before the money bounds (README "Request limits") is not copied into an item.
    else if (i.unit_price == null && (product.price ?? 0) > MAX_MONEY) {
      errors.push({ path: `items.${n}.unit_price`, message: "is required: the product's stored price is beyond 1e12" });
    }
  });
  if (errors.length) throw invalidMany(errors);
  await changeContract(ctx, tx, w, principal, id, "items", async () => {
    const wanted = items.map((i) => {
      const p = found.get(i.product_id)!;
      return { product_id: p.id, description: i.description ?? p.name, quantity: i.quantity ?? 1, unit_price: i.unit_price ?? p.price ?? 0 };
    });
    // The same list, in the same order (itemsOf reads by position), as stored: the items keep
    // their ids and nothing fires.
    const held = await itemsOf(tx, id);
    if (held.length === wanted.length && held.every((h, n) => unchanged(h, wanted[n]))) return false;
    await tx.delete(contractItems).where(eq(contractItems.contract_id, id)).run();
    for (const [n, it] of wanted.entries()) await tx.insert(contractItems).values({ contract_id: id, position: n, ...it }).run();
    return true;
  });
  return { items: await itemsOf(tx, id) };
}

/** Adds and removes flags by classification name (400 for unknown names or a name in both lists). */
async function setContractFlags(ctx: AppContext, tx: TenantDb, w: TenantWriteScope, principal: Principal, id: string, body: FlagsBody): Promise<{ flags: string[] }> {
  await getContract(tx, id);
  const add = body.add ?? [];
  const remove = body.remove ?? [];
  const errors: FieldError[] = [];
  const addIds = await classificationIds(tx, add);
  for (const i of addIds.unknown) errors.push({ path: `add.${i}`, message: `unknown classification '${add[i]}'` });
  const removeIds = await classificationIds(tx, remove);
  for (const i of removeIds.unknown) errors.push({ path: `remove.${i}`, message: `unknown classification '${remove[i]}'` });
  remove.forEach((name, i) => {
    if (add.includes(name)) errors.push({ path: `remove.${i}`, message: `'${name}' is also in add` });
  });
  if (errors.length) throw invalidMany(errors);
  await changeContract(ctx, tx, w, principal, id, "flags", async () => {
    const before = (await flagNames(tx, id)).join("\n");
    for (const cid of addIds.ids) await tx.insert(contractFlags).values({ contract_id: id, classification_id: cid }).onConflictDoNothing().run();
    if (removeIds.ids.length) {
      await tx
        .delete(contractFlags)
        .where(and(eq(contractFlags.contract_id, id), inArray(contractFlags.classification_id, removeIds.ids)))
        .run();
    }
    return (await flagNames(tx, id)).join("\n") !== before;
  });
  return { flags: await flagNames(tx, id) };
}

export interface ContractLabel {
  number: string;
  username: string | null;
  customer_name: string;
}

/** Number, username and customer name of the given contracts (the usage list labels its rows with them); unknown ids are left out. */
export async function contractLabels(db: TenantDb, ids: string[]): Promise<Map<string, ContractLabel>> {
  if (!ids.length) return new Map();
  const select = `SELECT c.id AS id, c.number AS number, cc.username AS username, p.name AS customer_name FROM contracts c
         JOIN persons p ON p.id = c.customer_id LEFT JOIN contract_configs cc ON cc.contract_id = c.id`;
  // Many ids, most of the contracts (a usage list searched by ?q labels every contract of its
  // period): reading every contract is cheaper than looking each up (measured, 10,000 of 10,000:
  // 23 ms against 37 ms).
  if (ids.length > LABELS_BY_SCAN && ids.length * 2 >= Number(((await clientOf(db).query("SELECT count(*) AS n FROM contracts").get()) as { n: number | string }).n)) {
    const wanted = new Set(ids);
    const all = (await clientOf(db).query(select).all()) as unknown as ({ id: string } & ContractLabel)[];
    return new Map(all.filter((r) => wanted.has(r.id)).map(({ id, ...label }) => [id, label]));
  }
  const rows = (await clientOf(db).query(`${select} WHERE c.id IN (SELECT value FROM json_each(?1))`).all(JSON.stringify(ids))) as unknown as ({ id: string } & ContractLabel)[];
  return new Map(rows.map(({ id, ...label }) => [id, label]));
}

const LABELS_BY_SCAN = 2_000;

export interface FairUseTerms {
  id: string;
  contract_status: string;
  allowance_gb: number | null;
}

/**
 * Fair use's look at contracts (isp/fair-use.ts): status and allowance of the contracts `ids`
 * (unknown ones left out), or of every contract with an allowance when `ids` is null.
 */
export async function fairUseTerms(db: TenantDb, ids: string[] | null): Promise<FairUseTerms[]> {
  const select = "SELECT c.id AS id, c.contract_status AS contract_status, cc.allowance_gb AS allowance_gb FROM contracts c JOIN contract_configs cc ON cc.contract_id = c.id";
  const rows = (
    ids === null
      ? await clientOf(db).query(`${select} WHERE cc.allowance_gb IS NOT NULL`).all()
      : ids.length
        ? await clientOf(db).query(`${select} WHERE c.id IN (SELECT value FROM json_each(?1))`).all(JSON.stringify(ids))
        : []
  ) as unknown as FairUseTerms[];
  return rows.map((r) => ({ ...r, allowance_gb: r.allowance_gb === null ? null : Number(r.allowance_gb) }));
}

/** The contracts a ?q finds, as search hits (GET /api/search): number, and the customer's name. */
export async function contractHits(net: ContractNetworkHook | null, db: TenantDb, q: string, limit: number): Promise<{ id: string; title: string; subtitle: string | null }[]> {
  const page = await listRows(db, contracts, listSpec(net), { q, limit }, (r: ContractRow) => r);
  const hits: { id: string; title: string; subtitle: string | null }[] = [];
  for (const r of page.items) {
    const customer = await findPerson(db, r.customer_id);
    hits.push({ id: r.id, title: r.number, subtitle: customer ? customer.name : null });
  }
  return hits;
}

// ---- the routes' entry points (index.ts): each opens one read or one write of the door -------

export const listContractsIn = (net: ContractNetworkHook | null, tenant: TenantDoor, p: Principal, query: ListParams) => tenant.read((db) => listContracts(net, db, p, query));
export const listLinkedContractsIn = (net: ContractNetworkHook | null, tenant: TenantDoor, p: Principal, params: AppParams, query: ListParams) =>
  tenant.read((db) => listLinkedContracts(net, db, p, params, query));
export const contractByIdentityIn = (net: ContractNetworkHook | null, tenant: TenantDoor, p: Principal, params: AppParams & { identity: string }) =>
  tenant.read((db) => contractByIdentity(net, db, p, params));
export const contractItemListIn = (tenant: TenantDoor, id: string) => tenant.read((db) => contractItemList(db, id));
export const createContractIn = (net: ContractNetworkHook | null, tenant: TenantDoor, p: Principal, body: ContractInput) => tenant.write((tx, w) => createContract(net, tx, w, p, body));
export const linkContractIn = (tenant: TenantDoor, id: string, body: { external_app_id: string; identity: string }) => tenant.write((tx, w) => linkContract(tx, w, id, body));

/** The writes that change a contract's view: they take the app (its caches, events, time zone). */
export const updateContractIn = (ctx: AppContext, tenant: TenantDoor, p: Principal, id: string, body: ContractInput) =>
  tenant.write((tx, w) => updateContract(ctx, tx, w, p, id, body));
export const setContractAddressIn = (ctx: AppContext, tenant: TenantDoor, p: Principal, id: string, body: AddressInput) =>
  tenant.write((tx, w) => setContractAddress(ctx, tx, w, p, id, body));
export const setContractStatusIn = (ctx: AppContext, tenant: TenantDoor, p: Principal, id: string, target: "ACTIVE" | "INACTIVE") =>
  tenant.write((tx, w) => setContractStatus(ctx, tx, w, p, id, target));
export const setContractConfigIn = (ctx: AppContext, tenant: TenantDoor, p: Principal, id: string, body: ContractConfigInput) =>
  tenant.write((tx, w) => setContractConfig(ctx, tx, w, p, id, body));
export const setContractItemsIn = (ctx: AppContext, tenant: TenantDoor, p: Principal, id: string, items: ContractItemInput[]) =>
  tenant.write((tx, w) => setContractItems(ctx, tx, w, p, id, items));
export const setContractFlagsIn = (ctx: AppContext, tenant: TenantDoor, p: Principal, id: string, body: FlagsBody) =>
  tenant.write((tx, w) => setContractFlags(ctx, tx, w, p, id, body));
