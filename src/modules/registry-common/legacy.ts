// TRANSITIONAL, goes with this folder at merge: the sync write-plus-event of the registry modules
// not yet on the store (contract, product, classification on this branch) and the writer-handle
// form of linkFromRequest that contract/index.ts still calls. Nothing converted uses it.
import { recordEvent, type EventGroup } from "../../core/events";
import type { AppContext } from "../../core/context";
import type { TenantDoor } from "../../core/store";
import type { TenantDb } from "../../db/sqlite";
import { invalid } from "../../lib/problem";
import { findApp } from "../externalapp/service";
import { linkFromRequest as linkThroughDoor, linkRecord, linkView } from "../externalapp/link-service";
import type { ExternalLinkInput, ExternalLinkView, RecordType } from "../externalapp/model";

type Tx = TenantDb;

/**
 * The link routes' body (externalapp/link-service.ts linkFromRequest, through the door). The
 * writer-handle form is only for contract/index.ts until its conversion lands.
 */
export function linkFromRequest(dbOrDoor: TenantDoor | TenantDb, type: RecordType, recordId: string, body: ExternalLinkInput): Promise<ExternalLinkView> | ExternalLinkView {
  if ("write" in dbOrDoor) return linkThroughDoor(dbOrDoor, type, recordId, body);
  const db = dbOrDoor;
  if (!findApp(db, { id: body.external_app_id })) throw invalid("external_app_id", "unknown external application");
  db.transaction((tx) => linkRecord(tx as unknown as TenantDb, body.external_app_id, type, recordId, body.identity), { behavior: "immediate" });
  return linkView(db, body.external_app_id, type, recordId);
}

type Emit = (type: EventGroup, id: string, data: (tx: Tx) => unknown) => void;

export function commit<T>(ctx: AppContext, db: TenantDb, corpId: string, fn: (tx: Tx, emit: Emit) => T): T {
  let wrote = false;
  const result = db.transaction(
    (tx) => {
      const pending: { type: EventGroup; id: string; data: (tx: Tx) => unknown }[] = [];
      const out = fn(tx as unknown as Tx, (type, id, data) => void pending.push({ type, id, data }));
      for (const e of pending) recordEvent(tx, e.type, e.id, e.data(tx as unknown as Tx));
      wrote = pending.length > 0;
      return out;
    },
    { behavior: "immediate" },
  );
  if (wrote) ctx.events.committed(corpId);
  return result;
}

type Change<T> = (tx: Tx, emit: Emit) => T;
interface Job {
  fn: Change<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}
interface Group {
  jobs: Job[];
  corpIds: Set<string>;
  scheduled: boolean;
}
const groups = new WeakMap<object, Group>();
const MAX_GROUP = 64;

export function commitGrouped<T>(ctx: AppContext, db: TenantDb, corpId: string, fn: Change<T>): Promise<T> {
  let group = groups.get(db.$client);
  if (!group) {
    group = { jobs: [], corpIds: new Set(), scheduled: false };
    groups.set(db.$client, group);
  }
  const g = group;
  return new Promise<T>((resolve, reject) => {
    g.jobs.push({ fn, resolve: resolve as (v: unknown) => void, reject });
    g.corpIds.add(corpId);
    if (!g.scheduled) {
      g.scheduled = true;
      setImmediate(() => flushGroup(ctx, db, g));
    }
  });
}

function flushGroup(ctx: AppContext, db: TenantDb, g: Group): void {
  const jobs = g.jobs.splice(0, MAX_GROUP);
  const corpIds = [...g.corpIds];
  g.corpIds.clear();
  if (g.jobs.length) {
    for (const id of corpIds) g.corpIds.add(id);
    setImmediate(() => flushGroup(ctx, db, g));
  } else g.scheduled = false;
  const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
  let wrote = false;
  try {
    db.transaction(
      (tx) => {
        for (const job of jobs) {
          try {
            const value = tx.transaction((sp) => {
              const pending: { type: EventGroup; id: string; data: (tx: Tx) => unknown }[] = [];
              const out = job.fn(sp as unknown as Tx, (type, id, data) => void pending.push({ type, id, data }));
              for (const e of pending) recordEvent(sp, e.type, e.id, e.data(sp as unknown as Tx));
              if (pending.length) wrote = true;
              return out;
            });
            outcomes.push({ ok: true, value });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      },
      { behavior: "immediate" },
    );
  } catch (error) {
    for (const job of jobs) job.reject(error);
    return;
  }
  if (wrote) for (const id of corpIds) ctx.events.committed(id);
  jobs.forEach((job, i) => {
    const o = outcomes[i];
    if (o.ok) job.resolve(o.value);
    else job.reject(o.error);
  });
}
