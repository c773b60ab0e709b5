// The network changes an operator or the ERP asks for (routes.md, "Network operations additions"):
// the network policy (PUT /api/isp/policy: SUSPENDED contracts online get a CoA-Request when the
// values in force for them change, or a Disconnect when the policy now rejects them) and the
// trust unblock (POST /api/contract/{id}/trust-unblock: a SUSPENDED contract's grace days, once per
// trust_unblock_every_days). The sessions are reconciled after the commit (reconcile-later.ts).
import type { AppContext, ContractChange } from "../../core/context";
import type { Principal } from "../../core/principal";
import type { TenantDoor } from "../../core/store";
import { clientOf } from "../../db/rows";
import { conflict } from "../../lib/problem";
import { toIso } from "../../lib/time";
import { contractConnection, fairUseTerms, getContract, getContractView } from "../contract/service";
import { contractNetworkHook, inForceOf, networkRow, policyView, readPolicy, writePolicy, type PolicyInput } from "./network-service";
import { reconcileLater } from "./reconcile-later";

const DAY_MS = 86_400_000;

/** GET /api/isp/policy (the routes' entry point: the policy as it reads). */
export const showNetworkPolicy = (tenant: TenantDoor) => tenant.read(policyView);

/** PUT /api/isp/policy. */
export async function setNetworkPolicy(ctx: AppContext, tenant: TenantDoor, principal: Principal, body: PolicyInput) {
  const now = toIso(ctx.now());
  const { after, changes } = await tenant.write(async (tx, w) => {
    const { before, after } = await writePolicy(tx, w, body);
    const changes: ContractChange[] = [];
    // Only a SUSPENDED contract's values depend on the policy; only one online has a NAS to tell.
    const online = (await clientOf(tx).query("SELECT DISTINCT contract_id FROM isp_radius_sessions WHERE open = 1 AND contract_id IS NOT NULL").all()) as { contract_id: string }[];
    const suspended = (await fairUseTerms(tx, online.map((r) => r.contract_id))).filter((t) => t.contract_status === "SUSPENDED");
    for (const t of suspended) {
      const conn = await contractConnection(tx, t.id);
      if (!conn) continue;
      const beforeNetwork = inForceOf({ contract_status: t.contract_status, config: conn.config }, await networkRow(tx, t.id), before, now);
      changes.push({ corpId: principal.corpId, contractId: t.id, before: conn, beforeNetwork, actorUserId: principal.userId, ip: principal.ip, cause: "network policy changed" });
    }
    return { after, changes };
  });
  for (const change of changes) reconcileLater(ctx, change);
  return after;
}

/** POST /api/contract/{id}/trust-unblock: 409 unless SUSPENDED, the policy gives days, and none was given within its period. */
export async function trustUnblock(ctx: AppContext, tenant: TenantDoor, principal: Principal, contractId: string) {
  const nowMs = ctx.now();
  const now = toIso(nowMs);
  const timeZone = principal.corp.timezone;
  const { view, change } = await tenant.write(async (tx, w) => {
    const contract = await getContract(tx, contractId);
    if (contract.contract_status !== "SUSPENDED") throw conflict("The contract is not suspended: trust unblock is for SUSPENDED contracts");
    const policy = await readPolicy(tx);
    if (policy.trust_unblock_days === 0) throw conflict("Trust unblock is off in the network policy (trust_unblock_days is 0)");
    const row = await networkRow(tx, contractId);
    if (row?.trusted_at) {
      const next = Date.parse(row.trusted_at) + policy.trust_unblock_every_days * DAY_MS;
      if (next > nowMs) {
        throw conflict(`The contract's trust unblock was already used on ${row.trusted_at.slice(0, 10)}; it can be given again from ${toIso(next).slice(0, 10)}`);
      }
    }
    const conn = (await contractConnection(tx, contractId))!;
    const terms = { contract_status: conn.contract.contract_status, config: conn.config };
    const beforeNetwork = inForceOf(terms, row, policy, now);
    const until = toIso(nowMs + policy.trust_unblock_days * DAY_MS);
    await clientOf(tx)
      .query(
        `INSERT INTO isp_contract_network (contract_id, trusted_at, trusted_until, updated_at) VALUES (?1, ?2, ?3, ?2)
           ON CONFLICT (contract_id) DO UPDATE SET trusted_at = excluded.trusted_at, trusted_until = excluded.trusted_until, updated_at = excluded.updated_at`,
      )
      .run(contractId, now, until);
    w.record({ type: "contract", id: contractId, action: "trust-unblock", before: { network: { state: beforeNetwork.state, until: null } }, after: { network: { state: "trusted", until } } });
    w.emit("ISP_AFTER_TRUST_UNBLOCK", contractId, (t: typeof tx) => getContractView(contractNetworkHook, t, contractId, timeZone));
    const change: ContractChange = { corpId: principal.corpId, contractId, before: conn, beforeNetwork, actorUserId: principal.userId, ip: principal.ip, cause: "trust unblock" };
    return { view: await getContractView(contractNetworkHook, tx, contractId, timeZone), change };
  });
  reconcileLater(ctx, change);
  return view;
}
