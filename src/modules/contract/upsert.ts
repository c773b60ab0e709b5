// Create or update a contract from an external application (the interface document's exchange).
// Everything the body names — cities, customer, billing customer, agent, the contract — is matched
// by the app's identities and written atomically, the cities and persons through their owners'
// services inside the same transaction: one savepoint of a grouped write (`writeGrouped`, one
// fsync for the upserts of one turn), so any failure rolls the whole body back, and the answer
// waits for the COMMIT.
import type { AppContext } from "../../core/context";
import type { EventGroup } from "../../core/events";
import type { Principal } from "../../core/principal";
import type { TenantDoor } from "../../core/store";
import type { TenantDb } from "../../db/sqlite";
import { forbidden, invalidMany, type FieldError } from "../../lib/problem";
import { unchanged } from "../../lib/unchanged";
import { addCity, cityIdByNames, cityView, getCity, updateCity } from "../city/service";
import { addParty, findPerson, personView, setParty } from "../person/service";
import { addressColumns } from "../address/columns";
import { linkedRecordId as lookUpLink, linkedRecordIds, linkKey, linkNewRecord, linkRecord } from "../externalapp/link-service";
import { sqliteClientOf } from "../../db/sqlite";
import type { RecordType } from "../externalapp/model";
import { resolveApp } from "../externalapp/service";
import type { AddressExternalInput } from "../address/model";
import type { Contract, ContractExternalInput, PartyExternalInput } from "./model";
import { addContract, checkDates, configRowOf, contractByNumber, contractConnection, contractChanged, contractColumns, contractViewById, findContract, insertDefaultConfig, numberHolder, setContract, type ContractConnection } from "./service";

type Kind = "city" | "person" | "contract";
type Change = { kind: Kind; action: "INSERT" | "UPDATE" };

/** Schema-level validation is done by Elysia; this completes it before anything is written. */
function validate(body: ContractExternalInput) {
  const errors: FieldError[] = [];
  const dates = checkDates(body, errors);
  if (errors.length) throw invalidMany(errors);
  return dates;
}

/**
 * The upsert of POST /api/contract/create/externalapp/{name|id}/...: the app the route names (404;
 * 403 for another app's key or an inactive app), the body's dates (400), then the write.
 */
export async function upsertFromExternalApp(ctx: AppContext, tenant: TenantDoor, principal: Principal, params: { externalAppId?: string; externalAppName?: string }, body: ContractExternalInput) {
  const timeZone = principal.corp.timezone;
  const { view, password } = await tenant.writeGrouped(async (tx, w) => {
    // On PostgreSQL every statement is a round trip inside the corporation's writer lock, so the
    // reads are batched: every identity the body names is looked up in one query sent beside the
    // app's (both go out together: one wait), and the rows the write compares with are read
    // together before its first write (below). On SQLite a statement is a function call and
    // the batch costs more than it saves (measured: 5 lookups 4 µs, the one query 9 µs), so
    // the statements run one by one where they are needed, as they always did.
    const batched = sqliteClientOf(tx) === null;
    let links: Map<string, string> | null = null;
    let app: Awaited<ReturnType<typeof resolveApp>>;
    if (batched) {
      const keys: [RecordType, string][] = [["contract", body.identity]];
      for (const p of [body.customer, body.billing_customer, body.agent]) {
        if (!p) continue;
        keys.push(["person", p.identity]);
        if (p.address) keys.push(["city", p.address.city.identity]);
      }
      keys.push(["city", body.address.city.identity]);
      // Checked in the transaction that writes: the answer is the app as it is at the write.
      [app, links] = await Promise.all([resolveApp(tx, principal, params), linkedRecordIds(tx, { id: params.externalAppId, name: params.externalAppName }, keys)]);
    } else app = await resolveApp(tx, principal, params);
    if (!app.status) throw forbidden("The external application is inactive");
    const dates = validate(body);
    // The links this write makes are recorded in `links` as it makes them, so a later lookup
    // answers as the table would.
    const linkedRecordId = async (type: RecordType, identity: string) => (links ? (links.get(linkKey(type, identity)) ?? null) : await lookUpLink(tx, app.id, type, identity));

    // The stored rows the write compares with, read together before the first write (one wait on
    // PostgreSQL instead of one per row). Each is taken once, where it was read before; nothing
    // the write does earlier changes it (a row is written only after it was taken), and a read
    // that failed throws there, so errors come in the same order. A second read of a row goes
    // to the database (it may have been written meanwhile).
    const early = new Map<string, Promise<{ ok: true; v: unknown } | { ok: false; e: unknown }>>();
    const prefetch = (key: string, read: () => Promise<unknown>) => {
      if (!early.has(key)) early.set(key, read().then((v) => ({ ok: true as const, v }), (e: unknown) => ({ ok: false as const, e })));
    };
    const take = async <T>(key: string, read: () => Promise<T>): Promise<T> => {
      const p = early.get(key);
      if (!p) return await read();
      early.delete(key);
      const r = await p;
      if (!r.ok) throw r.e;
      return r.v as T;
    };
    if (links) {
      const linked = (type: RecordType, identity: string) => links!.get(linkKey(type, identity)) ?? null;
      const prefetchCity = (a: AddressExternalInput | null | undefined) => {
        const id = a && linked("city", a.city.identity);
        if (id) prefetch(`city\n${id}`, () => getCity(tx, id));
      };
      for (const p of [body.customer, body.billing_customer]) {
        if (!p) continue;
        const id = linked("person", p.identity);
        if (id) prefetch(`person\n${id}`, () => findPerson(tx, id));
        prefetchCity(p.address);
      }
      if (body.agent && !linked("person", body.agent.identity)) prefetchCity(body.agent.address);
      prefetchCity(body.address);
      prefetch("holder", () => contractByNumber(tx, body.number));
      const contractId = linked("contract", body.identity);
      if (contractId) prefetch("config", () => configRowOf(tx, contractId));
      const probe = ctx.openSessionProbe;
      if (contractId && probe) prefetch("sessions", () => probe(tx, contractId));
    }
    // One event per record changed, in the order first touched; an INSERT is not followed by an UPDATE.
    const changes = new Map<string, Change>();
    const touch = (id: string, kind: Kind, action: Change["action"]) => {
      if (!changes.has(id)) changes.set(id, { kind, action });
    };
    // A body names the same city (and often the same party) several times: each identity is
    // resolved once; a repeat with other data is resolved again, so the last one wins as before.
    const resolved = new Map<string, { data: Record<string, unknown>; id: string }>();
    const again = (key: string, data: Record<string, unknown>) => {
      const r = resolved.get(key);
      return r && unchanged(r.data, data) && unchanged(data, r.data) ? r.id : null;
    };

    const cityIdFor = async (c: AddressExternalInput["city"]): Promise<string> => {
      const data = { name: c.name, state: c.state, country: c.country };
      const key = `city\n${c.identity}`;
      const known = again(key, data);
      if (known) return known;
      const id = await resolveCity(c.identity, data);
      resolved.set(key, { data, id });
      return id;
    };
    const resolveCity = async (identity: string, data: { name: string; state: string; country: string }): Promise<string> => {
      const linked = await linkedRecordId("city", identity);
      if (linked) {
        const current = await take(`city\n${linked}`, () => getCity(tx, linked));
        if (!unchanged(current, data)) {
          await updateCity(tx, linked, data);
          touch(linked, "city", "UPDATE");
          w.record({ type: "city", id: linked, action: "update", before: current, after: { ...current, ...data } });
        }
        return linked;
      }
      // A city the corporation already has under these names is adopted, not duplicated.
      let id = await cityIdByNames(tx, data);
      const link = { [`externalapp.${app.id}`]: identity };
      if (!id) {
        id = await addCity(tx, data);
        touch(id, "city", "INSERT");
        w.record({ type: "city", id, action: "create", before: null, after: { id, ...data, ...link } });
      } else w.record({ type: "city", id, action: "link", before: null, after: link });
      await linkRecord(tx, app.id, "city", id, identity);
      // linkRecord replaced any other identity of this city.
      if (links) {
        for (const [k, v] of links) if (v === id && k.startsWith("city\n")) links.delete(k);
        links.set(linkKey("city", identity), id);
      }
      return id;
    };

    const addressOf = async (a: AddressExternalInput | null | undefined) => addressColumns(a, a ? await cityIdFor(a.city) : null);

    /** An agent that already exists is linked as it is, never overwritten (routes.md, Divergences 2). */
    const partyIdFor = async (p: PartyExternalInput, overwrite: boolean): Promise<string> => {
      const linked = await linkedRecordId("person", p.identity);
      if (linked && !overwrite) return linked;
      const data = {
        name: p.name,
        display_name: p.display_name ?? null,
        tp_doc_identity: p.tp_doc_identity ?? null,
        doc_identity: p.doc_identity ?? null,
        corporate: p.corporate ?? false,
        ...(await addressOf(p.address)),
      };
      const key = `person\n${p.identity}`;
      const known = again(key, data);
      if (known) return known;
      let id: string;
      if (linked) {
        id = linked;
        const current = (await take(`person\n${linked}`, () => findPerson(tx, linked)))!;
        if (!unchanged(current, data)) {
          await setParty(tx, linked, data);
          touch(linked, "person", "UPDATE");
          w.record({ type: "person", id, action: "update", before: current, after: { ...current, ...data } });
        }
      } else {
        id = await addParty(tx, data);
        touch(id, "person", "INSERT");
        w.record({ type: "person", id, action: "create", before: null, after: { id, ...data, [`externalapp.${app.id}`]: p.identity } });
        await linkNewRecord(tx, app.id, "person", id, p.identity);
        links?.set(linkKey("person", p.identity), id);
      }
      resolved.set(key, { data, id });
      return id;
    };

    const customerId = await partyIdFor(body.customer, true);
    const billingId = body.billing_customer ? await partyIdFor(body.billing_customer, true) : customerId;
    const agentId = body.agent ? await partyIdFor(body.agent, false) : null;
    const existingId = await linkedRecordId("contract", body.identity);
    const holder = await numberHolder(tx, body.number, existingId, take("holder", () => contractByNumber(tx, body.number)));
    const columns = {
      customer_id: customerId,
      billing_customer_id: billingId,
      agent_id: agentId,
      ...contractColumns(body, dates),
      ...(await addressOf(body.address)),
    };
    let id: string;
    let password: string | null = null;
    if (existingId) {
      id = existingId;
      // Unchanged: its columns as stored (the holder of an unchanged number is this contract) and
      // nothing it embeds (parties, cities) changed above. Then nothing is written and nothing
      // fires; config, items, flags and links are never touched by the upsert.
      if (changes.size > 0 || holder === null || !unchanged(holder, columns)) {
        const before: ContractConnection | null = await contractConnection(tx, id, holder, take("config", () => configRowOf(tx, id)));
        const was = holder?.id === id ? holder : await findContract(tx, id);
        await setContract(tx, id, columns);
        touch(id, "contract", "UPDATE");
        w.record({ type: "contract", id, action: "update", before: was ?? null, after: { ...was, ...columns } });
        // Asked here, under the writer lock, the watchers need not read after the COMMIT.
        const probe = ctx.openSessionProbe;
        const openSessions = probe ? await take("sessions", () => probe(tx, id)) : undefined;
        w.afterCommit(() => contractChanged(ctx, { corpId: principal.corpId, contractId: id, before, actorUserId: null, ip: null, openSessions }));
      }
    } else {
      id = await addContract(tx, columns);
      password = await insertDefaultConfig(tx, id, body.number);
      await linkNewRecord(tx, app.id, "contract", id, body.identity);
      touch(id, "contract", "INSERT");
      w.record({ type: "contract", id, action: "create", before: null, after: { id, ...columns, [`externalapp.${app.id}`]: body.identity } });
    }
    // Read once: the event's payload and (after the commit) the response are this same state.
    const view: Contract = (await contractViewById(tx, id, timeZone))!;

    for (const [recordId, c] of changes) {
      const type = `${c.kind.toUpperCase()}_AFTER_${c.action}` as EventGroup;
      w.emit(type, recordId, c.kind === "contract" ? view : (t: TenantDb) => viewOf(t, c.kind, recordId));
    }
    return { view, password };
  });
  // The generated password is shown by the response that generated it, and only there.
  const contract = password === null ? view : { ...view, config: { ...view.config, password } };
  return { contract: { ...contract, identity: body.identity }, created: password !== null };
}

async function viewOf(tx: TenantDb, kind: Kind, id: string): Promise<unknown> {
  if (kind === "city") return cityView(await getCity(tx, id));
  return personView(tx, (await findPerson(tx, id))!);
}
