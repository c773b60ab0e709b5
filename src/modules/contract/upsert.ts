// Create or update a contract from an external application (the interface document's exchange).
// Everything the body names — cities, customer, billing customer, agent, the contract — is matched
// by the app's identities and written in ONE synchronous transaction: any failure rolls it all back.
import { eq } from "drizzle-orm";
import type { AppContext } from "../../context";
import type { TenantDb } from "../../db/sqlite";
import { cities, contracts, persons } from "../../db/tenant/schema";
import type { EventGroup } from "../../events/outbox";
import { invalidMany, type FieldError } from "../../lib/problem";
import { cityView, findCityByNames, getCity, updateCity } from "../city/service";
import { personView } from "../person/service";
import {
  addressColumns,
  commit,
  linkedRecordId,
  linkRecord,
  type AddressExternalInput,
  type ExternalAppRow,
  type Tx,
} from "../registry-common";
import type { ContractExternalInput, PartyExternalInput } from "./model";
import { checkDates, checkNumberFree, contractColumns, contractViewById, insertDefaultConfig } from "./service";

type Kind = "city" | "person" | "contract";
type Change = { kind: Kind; action: "INSERT" | "UPDATE" };

/** Schema-level validation is done by Elysia; this completes it before anything is written. */
function validate(body: ContractExternalInput) {
  const errors: FieldError[] = [];
  const dates = checkDates(body, errors);
  if (errors.length) throw invalidMany(errors);
  return dates;
}

const same = (a: Record<string, unknown>, b: Record<string, unknown>) => Object.keys(b).every((k) => a[k] === b[k]);

export function upsertFromExternalApp(ctx: AppContext, db: TenantDb, corpId: string, timeZone: string, app: ExternalAppRow, body: ContractExternalInput) {
  const dates = validate(body);
  let created = false;
  const contractId = commit(ctx, db, corpId, (tx, emit) => {
    // One event per record changed, in the order first touched; an INSERT is not followed by an UPDATE.
    const changes = new Map<string, Change>();
    const touch = (id: string, kind: Kind, action: Change["action"]) => {
      if (!changes.has(id)) changes.set(id, { kind, action });
    };

    const cityIdFor = (c: AddressExternalInput["city"]): string => {
      const data = { name: c.name, state: c.state, country: c.country };
      const linked = linkedRecordId(tx, app.id, "city", c.identity);
      if (linked) {
        if (!same(getCity(tx, linked), data)) {
          updateCity(tx, linked, data);
          touch(linked, "city", "UPDATE");
        }
        return linked;
      }
      // A city the corporation already has under these names is adopted, not duplicated.
      const existing = findCityByNames(tx, data);
      const id = existing?.id ?? tx.insert(cities).values(data).returning({ id: cities.id }).get().id;
      if (!existing) touch(id, "city", "INSERT");
      linkRecord(tx, app.id, "city", id, c.identity);
      return id;
    };

    const addressOf = (a: AddressExternalInput | null | undefined) => addressColumns(a, a ? cityIdFor(a.city) : null);

    /** An agent that already exists is linked as it is, never overwritten (routes.md, Divergences 2). */
    const partyIdFor = (p: PartyExternalInput, overwrite: boolean): string => {
      const linked = linkedRecordId(tx, app.id, "person", p.identity);
      if (linked && !overwrite) return linked;
      const data = {
        name: p.name,
        display_name: p.display_name ?? null,
        tp_doc_identity: p.tp_doc_identity ?? null,
        doc_identity: p.doc_identity ?? null,
        corporate: p.corporate ?? false,
        ...addressOf(p.address),
      };
      if (linked) {
        const current = tx.select().from(persons).where(eq(persons.id, linked)).get()!;
        if (!same(current, data)) {
          tx.update(persons).set(data).where(eq(persons.id, linked)).run();
          touch(linked, "person", "UPDATE");
        }
        return linked;
      }
      const id = tx.insert(persons).values(data).returning({ id: persons.id }).get().id;
      touch(id, "person", "INSERT");
      linkRecord(tx, app.id, "person", id, p.identity);
      return id;
    };

    const customerId = partyIdFor(body.customer, true);
    const billingId = body.billing_customer ? partyIdFor(body.billing_customer, true) : customerId;
    const agentId = body.agent ? partyIdFor(body.agent, false) : null;
    const existingId = linkedRecordId(tx, app.id, "contract", body.identity);
    checkNumberFree(tx, body.number, existingId);
    const columns = {
      customer_id: customerId,
      billing_customer_id: billingId,
      agent_id: agentId,
      ...contractColumns(body, dates),
      ...addressOf(body.address),
    };
    let id: string;
    if (existingId) {
      id = existingId;
      tx.update(contracts).set(columns).where(eq(contracts.id, id)).run();
      touch(id, "contract", "UPDATE");
    } else {
      id = tx.insert(contracts).values(columns).returning({ id: contracts.id }).get().id;
      insertDefaultConfig(tx, id, body.number);
      linkRecord(tx, app.id, "contract", id, body.identity);
      touch(id, "contract", "INSERT");
      created = true;
    }

    for (const [recordId, c] of changes) {
      const type = `${c.kind.toUpperCase()}_AFTER_${c.action}` as EventGroup;
      emit(type, recordId, (t: Tx) => viewOf(t, c.kind, recordId, timeZone));
    }
    return id;
  });
  // The generated password is shown by the response that generated it, and only there.
  return { contract: { ...contractViewById(db, contractId, timeZone, created)!, identity: body.identity }, created };
}

function viewOf(tx: Tx, kind: Kind, id: string, timeZone: string): unknown {
  if (kind === "city") return cityView(getCity(tx, id));
  if (kind === "person") return personView(tx, tx.select().from(persons).where(eq(persons.id, id)).get()!);
  return contractViewById(tx, id, timeZone);
}
