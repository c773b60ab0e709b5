// Create or update a contract from an external application (the interface document's exchange).
// Everything the body names — cities, customer, billing customer, agent, the contract — is matched
// by the app's identities and written atomically, the cities and persons through their owners'
// services inside the same transaction: one savepoint of a grouped write (`writeGrouped`, one
// fsync for the upserts of one turn), so any failure rolls the whole body back, and the answer
// waits for the COMMIT. The work is a pipeline of named steps (upsert-steps.ts).
import type { AppContext } from "../../core/context";
import type { Principal } from "../../core/principal";
import type { TenantDoor } from "../../core/store";
import type { ContractExternalInput } from "./model";
import { contractStep, eventsStep, linksStep, partiesStep, prefetchStored, resolveAppStep } from "./upsert-steps";

/**
 * What an upsert may change besides what it creates: its contract (by identity and number) and its
 * customers. On PostgreSQL upserts naming none of another's run side by side in their group (one
 * round trip per step for all of them); an agent is only linked or created (two creating the same
 * one meet on the link's key and the group runs again one at a time), and a city write runs alone
 * (cityStep: RunsAlone).
 */
function upsertKeys(body: ContractExternalInput): string[] {
  const keys = [`contract\n${body.identity}`, `number\n${body.number}`, `person\n${body.customer.identity}`];
  if (body.billing_customer) keys.push(`person\n${body.billing_customer.identity}`);
  return keys;
}

/**
 * The upsert of POST /api/contract/create/externalapp/{name|id}/...: the app the route names (404;
 * 403 for another app's key or an inactive app), the body's dates (400), then the write.
 */
export async function upsertFromExternalApp(ctx: AppContext, tenant: TenantDoor, principal: Principal, params: { externalAppId?: string; externalAppName?: string }, body: ContractExternalInput) {
  const { view, password } = await tenant.writeGrouped(async (tx, w) => {
    const run = await resolveAppStep(ctx, tx, w, principal, params, body);
    prefetchStored(run);
    const parties = await partiesStep(run);
    const { id, password } = await contractStep(run, parties);
    // The view read for the events does not read the links: both go out together.
    const [view] = await Promise.all([eventsStep(run, id), linksStep(run)]);
    return { view, password };
  }, { independent: true, keys: upsertKeys(body) });
  // The generated password is shown by the response that generated it, and only there.
  const contract = password === null ? view : { ...view, config: { ...view.config, password } };
  return { contract: { ...contract, identity: body.identity }, created: password !== null };
}
