// The steps of the contract upsert from an external app (upsert.ts runs them in order, in one
// write): resolve the app and the body's identities → prefetch the stored rows → cities →
// persons → the contract → its config (a new contract's) → the new links → history and events.
// Each step takes the run's state (`UpsertRun`), so it can be read, tested and profiled alone.
import type { AppContext } from "../../core/context";
import type { EventGroup } from "../../core/events";
import type { Principal } from "../../core/principal";
import { RunsAlone, statementsAreRoundTrips, type TenantWriteScope } from "../../core/store";
import type { TenantDb } from "../../db/sqlite";
import type { TogetherRead } from "../../db/handle";
import { readTogether, writeTogether } from "../../db/rows";
import { forbidden, invalidMany, type FieldError } from "../../lib/problem";
import { unchanged } from "../../lib/unchanged";
import { addCity, cityIdByNames, cityOfRow, cityRead, cityView, getCity, updateCity, type CityRow } from "../city/service";
import { addPartyWrite, findPerson, personOfRow, personRead, personView, setParty } from "../person/service";
import { addressColumns } from "../address/columns";
import { linkedRecordId as lookUpLink, linkedRecordIdsRead, linkKey, linkNewRecordWrite, linkRecord, linksOfRows } from "../externalapp/link-service";
import type { RecordType } from "../externalapp/model";
import { appOfRow, appRead, checkedApp, resolveApp } from "../externalapp/service";
import type { AddressExternalInput } from "../address/model";
import type { Contract, ContractExternalInput, PartyExternalInput } from "./model";
import { addContractWrite, checkDates, configRowOf, configRowRead, contractByNumber, contractByNumberRead, contractConnection, contractChanged, contractColumns, contractViewById, defaultConfigWrite, findContract, numberHolder, setContractWrite, type ContractConnection } from "./service";

type Kind = "city" | "person" | "contract";
type Touched = { kind: Kind; action: "INSERT" | "UPDATE" };
type App = Awaited<ReturnType<typeof resolveApp>>;
type Settled = { ok: true; v: unknown } | { ok: false; e: unknown };

/** What the steps of one upsert share: its inputs, the app, and what the steps found or changed. */
export interface UpsertRun {
  readonly ctx: AppContext;
  readonly tx: TenantDb;
  readonly w: TenantWriteScope;
  readonly principal: Principal;
  readonly body: ContractExternalInput;
  app: App;
  dates: ReturnType<typeof checkDates>;
  /**
   * The body's identities and their records, read in one query where statements are round trips
   * (null: each is looked up where needed). The links this write makes are added as it makes them,
   * so a later lookup answers as the table would.
   */
  links: Map<string, string> | null;
  /** Stored rows read ahead (prefetchStored), each taken once where it is needed. */
  early: Map<string, Promise<Settled>>;
  /** One event per record changed, in the order first touched; an INSERT is not followed by an UPDATE. */
  touched: Map<string, Touched>;
  /** Each identity the body names is resolved once; a repeat with other data is resolved again. */
  resolved: Map<string, { data: Record<string, unknown>; id: string }>;
  /**
   * The links of the records this run created (persons, the contract), written together at the
   * end (linksStep): nothing else can link these identities meanwhile (the run holds the writer
   * lock and found them unlinked), and the run's own lookups answer from here.
   */
  newLinks: Map<string, { type: RecordType; id: string; identity: string; written?: boolean }>;
  /** The INSERTs of the persons the run created, sent with the contract's own write (contractStep). */
  pendingWrites: TogetherRead[];
}

/** Schema-level validation is done by Elysia; this completes it before anything is written. */
function validate(body: ContractExternalInput) {
  const errors: FieldError[] = [];
  const dates = checkDates(body, errors);
  if (errors.length) throw invalidMany(errors);
  return dates;
}

/** The identities the body names, in the order the steps resolve them. */
function identitiesOf(body: ContractExternalInput): [RecordType, string][] {
  const keys: [RecordType, string][] = [["contract", body.identity]];
  for (const p of [body.customer, body.billing_customer, body.agent]) {
    if (!p) continue;
    keys.push(["person", p.identity]);
    if (p.address) keys.push(["city", p.address.city.identity]);
  }
  keys.push(["city", body.address.city.identity]);
  return keys;
}

/**
 * Step 1: the app the route names (404; 403 for another app's key or an inactive app, checked in
 * the transaction that writes), the body's dates (400), and — where statements are round trips —
 * every identity the body names and the holder of the body's number, in the app's statement
 * (readTogether: one statement).
 */
export async function resolveAppStep(ctx: AppContext, tx: TenantDb, w: TenantWriteScope, principal: Principal, params: { externalAppId?: string; externalAppName?: string }, body: ContractExternalInput): Promise<UpsertRun> {
  let app: App;
  let links: Map<string, string> | null = null;
  const early = new Map<string, Promise<Settled>>();
  if (statementsAreRoundTrips(tx)) {
    const by = { id: params.externalAppId, name: params.externalAppName };
    const [appRow, linkRows, holder] = await readTogether(tx, [appRead(by), linkedRecordIdsRead(by, identitiesOf(body)), contractByNumberRead(body.number)]);
    app = checkedApp(appOfRow(appRow), principal);
    links = linksOfRows(linkRows);
    early.set("holder", Promise.resolve({ ok: true, v: holder }));
  } else app = await resolveApp(tx, principal, params);
  if (!app.status) throw forbidden("The external application is inactive");
  const dates = validate(body);
  return { ctx, tx, w, principal, body, app, dates, links, early, touched: new Map(), resolved: new Map(), newLinks: new Map(), pendingWrites: [] };
}

async function linkedRecordId(run: UpsertRun, type: RecordType, identity: string): Promise<string | null> {
  const made = run.newLinks.get(linkKey(type, identity));
  if (made) return made.id;
  return run.links ? (run.links.get(linkKey(type, identity)) ?? null) : await lookUpLink(run.tx, run.app.id, type, identity);
}

function prefetch(run: UpsertRun, key: string, read: () => Promise<unknown>): void {
  if (!run.early.has(key)) run.early.set(key, read().then((v) => ({ ok: true as const, v }), (e: unknown) => ({ ok: false as const, e })));
}

/** A row read ahead, once (a second read goes to the database: it may have been written meanwhile); else read now. */
async function take<T>(run: UpsertRun, key: string, read: () => Promise<T>): Promise<T> {
  const p = run.early.get(key);
  if (!p) return await read();
  run.early.delete(key);
  const r = await p;
  if (!r.ok) throw r.e;
  return r.v as T;
}

/**
 * Step 2 (where statements are round trips): the stored rows the write compares with, read
 * together (readTogether: one statement) before its first write. Nothing the write does earlier
 * changes any of them (a row is written only after it was taken), and a read that failed throws
 * where it is taken, so errors come in the same order.
 */
export function prefetchStored(run: UpsertRun): void {
  const { links, tx, body } = run;
  if (!links) return;
  const reads = new Map<string, { read: TogetherRead; of: (row: unknown) => unknown }>();
  const linked = (type: RecordType, identity: string) => links.get(linkKey(type, identity)) ?? null;
  const prefetchCity = (a: AddressExternalInput | null | undefined) => {
    const id = a && linked("city", a.city.identity);
    if (id) reads.set(`city\n${id}`, { read: cityRead(id), of: cityOfRow });
  };
  for (const p of [body.customer, body.billing_customer]) {
    if (!p) continue;
    const id = linked("person", p.identity);
    if (id) reads.set(`person\n${id}`, { read: personRead(id), of: personOfRow });
    prefetchCity(p.address);
  }
  if (body.agent && !linked("person", body.agent.identity)) prefetchCity(body.agent.address);
  prefetchCity(body.address);
  const contractId = linked("contract", body.identity);
  if (contractId) reads.set("config", { read: configRowRead(contractId), of: (row) => row });
  const probe = run.ctx.openSessionProbe;
  if (contractId && probe) reads.set("sessions", { read: probe.read(contractId), of: (row) => probe.open(row) });
  if (reads.size) {
    const rows = readTogether(tx, [...reads.values()].map((r) => r.read));
    [...reads].forEach(([key, r], i) => prefetch(run, key, async () => r.of((await rows)[i])));
  }
}

function touch(run: UpsertRun, id: string, kind: Kind, action: Touched["action"]): void {
  if (!run.touched.has(id)) run.touched.set(id, { kind, action });
}

/** The id this identity resolved to earlier in the run with the same data, or null. */
function resolvedBefore(run: UpsertRun, key: string, data: Record<string, unknown>): string | null {
  const r = run.resolved.get(key);
  return r && unchanged(r.data, data) && unchanged(data, r.data) ? r.id : null;
}

/**
 * Step 3: a city of the body — the linked one (updated when its names differ), else one the
 * corporation already has under these names (adopted and linked), else a new one.
 */
export async function cityStep(run: UpsertRun, c: AddressExternalInput["city"]): Promise<string> {
  const data = { name: c.name, state: c.state, country: c.country };
  const key = `city\n${c.identity}`;
  const known = resolvedBefore(run, key, data);
  if (known) return known;
  const id = await resolveCity(run, c.identity, data);
  run.resolved.set(key, { data, id });
  return id;
}

async function resolveCity(run: UpsertRun, identity: string, data: { name: string; state: string; country: string }): Promise<string> {
  const { tx, w, app, links } = run;
  const linked = await linkedRecordId(run, "city", identity);
  if (linked) {
    const current = await take(run, `city\n${linked}`, () => getCity(tx, linked));
    if (!unchanged(current, data)) {
      if (w.besideOthers) throw new RunsAlone();
      await updateCity(tx, linked, data);
      touch(run, linked, "city", "UPDATE");
      w.record({ type: "city", id: linked, action: "update", before: current, after: { ...current, ...data } });
    }
    return linked;
  }
  // Another upsert of the group may name this city too: adopting or adding it runs alone.
  if (w.besideOthers) throw new RunsAlone();
  let id = await cityIdByNames(tx, data);
  const link = { [`externalapp.${app.id}`]: identity };
  if (!id) {
    id = await addCity(tx, data);
    touch(run, id, "city", "INSERT");
    w.record({ type: "city", id, action: "create", before: null, after: { id, ...data, ...link } });
  } else w.record({ type: "city", id, action: "link", before: null, after: link });
  await linkRecord(tx, app.id, "city", id, identity);
  // linkRecord replaced any other identity of this city.
  if (links) {
    for (const [k, v] of links) if (v === id && k.startsWith("city\n")) links.delete(k);
    links.set(linkKey("city", identity), id);
  }
  return id;
}

/** An address of the body as the columns of its record, its city resolved (step 3). */
export async function addressStep(run: UpsertRun, a: AddressExternalInput | null | undefined) {
  return addressColumns(a, a ? await cityStep(run, a.city) : null);
}

/**
 * Step 4: a person of the body (customer, billing customer, agent). An agent that already exists
 * is linked as it is, never overwritten (`overwrite: false`; routes.md, Divergences 2).
 */
export async function personStep(run: UpsertRun, p: PartyExternalInput, overwrite: boolean): Promise<string> {
  const { w, tx, app } = run;
  const linked = await linkedRecordId(run, "person", p.identity);
  if (linked && !overwrite) return linked;
  const data = {
    name: p.name,
    display_name: p.display_name ?? null,
    tp_doc_identity: p.tp_doc_identity ?? null,
    doc_identity: p.doc_identity ?? null,
    corporate: p.corporate ?? false,
    ...(await addressStep(run, p.address)),
  };
  const key = `person\n${p.identity}`;
  const known = resolvedBefore(run, key, data);
  if (known) return known;
  let id: string;
  if (linked) {
    id = linked;
    const current = (await take(run, `person\n${linked}`, () => findPerson(tx, linked)))!;
    if (!unchanged(current, data)) {
      await setParty(tx, linked, data, current);
      touch(run, linked, "person", "UPDATE");
      w.record({ type: "person", id, action: "update", before: current, after: { ...current, ...data } });
    }
  } else {
    // Inserted with the contract's statement (contractStep): nothing reads it before.
    const party = addPartyWrite(data);
    id = party.id;
    run.pendingWrites.push(party.write);
    touch(run, id, "person", "INSERT");
    w.record({ type: "person", id, action: "create", before: null, after: { id, ...data, [`externalapp.${app.id}`]: p.identity } });
    run.newLinks.set(linkKey("person", p.identity), { type: "person", id, identity: p.identity });
  }
  run.resolved.set(key, { data, id });
  return id;
}

/** The persons of the body (step 4 for each): customer, billing customer (else the customer), agent. */
export async function partiesStep(run: UpsertRun) {
  const { body } = run;
  const customerId = await personStep(run, body.customer, true);
  const billingId = body.billing_customer ? await personStep(run, body.billing_customer, true) : customerId;
  const agentId = body.agent ? await personStep(run, body.agent, false) : null;
  return { customer_id: customerId, billing_customer_id: billingId, agent_id: agentId };
}

/**
 * Step 5: the contract. A linked one is updated unless its columns as stored (the holder of an
 * unchanged number is this contract) and nothing it embeds (parties, cities) changed: then nothing
 * is written and nothing fires; config, items, flags and links are never touched by the upsert.
 * A new one is inserted with its default config (step 6) and linked.
 */
export async function contractStep(run: UpsertRun, parties: Awaited<ReturnType<typeof partiesStep>>): Promise<{ id: string; password: string | null }> {
  const { tx, w, body, app, ctx, principal } = run;
  const existingId = await linkedRecordId(run, "contract", body.identity);
  const holder = await numberHolder(tx, body.number, existingId, take(run, "holder", () => contractByNumber(tx, body.number)));
  const columns = { ...parties, ...contractColumns(body, run.dates), ...(await addressStep(run, body.address)) };
  if (!existingId) {
    // The contract, its config (step 6) and the links of every record the run created, in one
    // statement on PostgreSQL (writeTogether; none reads what another writes).
    const { id, write } = addContractWrite(columns);
    const config = configStep(run, id);
    run.newLinks.set(linkKey("contract", body.identity), { type: "contract", id, identity: body.identity });
    await writeTogether(tx, [...run.pendingWrites.splice(0), write, config.write, ...newLinkWrites(run)]);
    const password = config.password;
    touch(run, id, "contract", "INSERT");
    w.record({ type: "contract", id, action: "create", before: null, after: { id, ...columns, [`externalapp.${app.id}`]: body.identity } });
    return { id, password };
  }
  const id = existingId;
  if (run.touched.size > 0 || holder === null || !unchanged(holder, columns)) {
    const before: ContractConnection | null = await contractConnection(tx, id, holder, take(run, "config", () => configRowOf(tx, id)));
    const was = holder?.id === id ? holder : await findContract(tx, id);
    await writeTogether(tx, [...run.pendingWrites.splice(0), setContractWrite(id, columns, was)]);
    touch(run, id, "contract", "UPDATE");
    w.record({ type: "contract", id, action: "update", before: was ?? null, after: { ...was, ...columns } });
    // Asked here, under the writer lock, the watchers need not read after the COMMIT.
    const probe = ctx.openSessionProbe;
    const openSessions = probe ? await take(run, "sessions", async () => probe.open((await readTogether(tx, [probe.read(id)]))[0])) : undefined;
    w.afterCommit(() => contractChanged(ctx, { corpId: principal.corpId, contractId: id, before, actorUserId: null, ip: null, openSessions }));
  }
  return { id, password: null };
}

/** Step 6: a new contract's default config (its statement); its generated password, shown once by the response. */
export function configStep(run: UpsertRun, contractId: string): { password: string; write: TogetherRead } {
  return defaultConfigWrite(contractId, run.body.number);
}

/** The statements of the links of the records the run created not yet written; taken once. */
function newLinkWrites(run: UpsertRun): TogetherRead[] {
  const writes = [...run.newLinks.values()].filter((l) => !l.written).map((l) => linkNewRecordWrite(run.app.id, l.type, l.id, l.identity));
  for (const l of run.newLinks.values()) l.written = true;
  return writes;
}

/** Step 7: the links of the records the run created, unless a new contract's statement wrote them (one statement on PostgreSQL). */
export async function linksStep(run: UpsertRun): Promise<void> {
  await writeTogether(run.tx, newLinkWrites(run));
}

/**
 * Step 8: the events of every record the run changed (its history was recorded where it changed),
 * the contract's payload the view the response answers with (read once).
 */
export async function eventsStep(run: UpsertRun, contractId: string): Promise<Contract> {
  const view: Contract = (await contractViewById(run.ctx.contractNetwork, run.tx, contractId, run.principal.corp.timezone))!;
  for (const [recordId, c] of run.touched) {
    const type = `${c.kind.toUpperCase()}_AFTER_${c.action}` as EventGroup;
    run.w.emit(type, recordId, c.kind === "contract" ? view : (t: TenantDb) => viewOf(t, c.kind, recordId, c.kind === "person" ? cityIdOf(run, recordId) : undefined));
  }
  return view;
}

/** The city id a person of the run was written with (its `address_city_id`), null for none; undefined if the run did not write it. */
function cityIdOf(run: UpsertRun, personId: string): string | null | undefined {
  let cityId: string | null | undefined;
  for (const r of run.resolved.values()) if (r.id === personId && "address_city_id" in r.data) cityId = r.data.address_city_id as string | null;
  return cityId;
}

/**
 * A touched record's event payload, read after the write. A person's row and its city (`cityId`,
 * as the run wrote it) in one statement where statements are round trips (readTogether).
 */
async function viewOf(tx: TenantDb, kind: Kind, id: string, cityId?: string | null): Promise<unknown> {
  if (kind === "city") return cityView(await getCity(tx, id));
  if (cityId === undefined || !statementsAreRoundTrips(tx)) return personView(tx, (await findPerson(tx, id))!);
  const reads = cityId === null ? [personRead(id)] : [personRead(id), cityRead(cityId)];
  const [row, city] = await readTogether(tx, reads);
  const c = city as CityRow | null | undefined;
  const cities = new Map(cityId === null ? [] : [[cityId, c ? { id: c.id, name: c.name, state: c.state, country: c.country } : null]]);
  return personView(tx, personOfRow(row)!, cities);
}
