// Network state routes (routes.md, "Network operations additions"): the corporation's network
// policy and a contract's trust unblock; the work is in network-changes.ts.
import { Elysia } from "elysia";
import type { AppContext } from "../../core/context";
import { IdParams } from "../../lib/schemas";
import type { authGuard } from "../../http/guard";
import { Contract } from "../contract/model";
import type { FairUseMarks } from "./fair-use";
import { NetworkPolicy, NetworkPolicyInput } from "./model";
import { setNetworkPolicy, showNetworkPolicy, trustUnblock } from "./network-changes";

export function networkRoutes(ctx: AppContext, guard: ReturnType<typeof authGuard>, fairUse: FairUseMarks) {
  return new Elysia({ name: "isp-network", prefix: "/api", tags: ["ISP"] })
    .use(guard)
    .get("/isp/policy", ({ tenant }) => showNetworkPolicy(tenant), {
      auth: "platform.isp",
      response: { 200: NetworkPolicy },
      detail: { summary: "Show the corporation's network policy (usage cycle, what a SUSPENDED contract gets, trust unblock); updated_at null: never set, the defaults" },
    })
    .put("/isp/policy", ({ tenant, principal, body }) => setNetworkPolicy(ctx, tenant, principal, body), {
      auth: "platform.isp",
      body: NetworkPolicyInput,
      response: { 200: NetworkPolicy },
      detail: {
        summary: "Set the network policy",
        description:
          "Every writable field is replaced (left out: its default). suspended_mode: reject (a SUSPENDED contract is refused and disconnected), reduce (it stays online at suspended_max_upload/download, both required), redirect (it gets suspended_pool_ipv4, required, whose addresses the NAS sends to its notice page). SUSPENDED contracts online whose values in force change get a CoA-Request (a Disconnect when the policy now rejects them).",
      },
    })
    .post("/contract/:id/trust-unblock", async ({ tenant, principal, params }) => {
      // Its grace has an end the fair-use job must see: indexed before the grace is given.
      await fairUse.watch(principal.corpId);
      return trustUnblock(ctx, tenant, principal, params.id);
    }, {
      auth: { guard: "platform.contract", key: true },
      params: IdParams,
      response: { 200: Contract },
      detail: {
        summary: "Give a SUSPENDED contract its grace days (trust unblock)",
        description:
          "The contract is served as if ACTIVE for the policy's trust_unblock_days (network.state trusted, network.until the end), once per trust_unblock_every_days; at the end of the grace it is suspended again (CoA or Disconnect per the policy) unless it became ACTIVE. 409: not SUSPENDED, trust unblock off (trust_unblock_days 0), or already given within the period. Event ISP_AFTER_TRUST_UNBLOCK.",
        tags: ["Contract"],
      },
    });
}
