// Fair use on the wire (test/modules/isp/fair-use-freeradius*.test.ts): a MikroTik layout that
// renders the values in force, and the lines FreeRADIUS (as the NAS's RFC 5176 listener) logged.
import type { CoaListener } from "./coa-harness";
import type { TestApp } from "./helpers";
import { must } from "./isp";
import { waitFor } from "./wait";

let n = 0;

/**
 * The layout of examples/suspension-redirect.md: the rate limit and pool in force
 * (`contract.effective.*`), so throttle, reduce and redirect reach the NAS, and the network state
 * as a MikroTik address list.
 */
export async function fairUseLayout(t: TestApp, token: string) {
  const vendor = await must(t, token, "POST", "/api/isp/manufacturer", { name: `MikroTik fair use ${++n}` });
  const rate = await must(t, token, "POST", "/api/isp/radius-attribute", { name: "Mikrotik-Rate-Limit", manufacturer_id: vendor.id, type: "string" });
  const existing = (await t.req("GET", "/api/isp/radius-attribute?name=Framed-Pool", { token })).body.items[0];
  const pool = existing ?? (await must(t, token, "POST", "/api/isp/radius-attribute", { name: "Framed-Pool", type: "string" }));
  const list = await must(t, token, "POST", "/api/isp/radius-attribute", { name: "Mikrotik-Address-List", manufacturer_id: vendor.id, type: "string" });
  const layout = await must(t, token, "POST", "/api/isp/layout", { name: `MikroTik fair use ${n}`, manufacturer_id: vendor.id });
  await must(t, token, "POST", `/api/isp/layout/${layout.id}/attribute`, {
    attribute_id: rate.id,
    operator: ":=",
    value: "{{contract.effective.max_upload}}/{{contract.effective.max_download}}",
  });
  await must(t, token, "POST", `/api/isp/layout/${layout.id}/attribute`, { attribute_id: pool.id, operator: ":=", value: "{{contract.effective.pool_name_ipv4}}" });
  await must(t, token, "POST", `/api/isp/layout/${layout.id}/attribute`, { attribute_id: list.id, operator: ":=", value: "{{contract.network.state}}" });
  return layout as { id: string };
}

/** The listener's log read from a mark on: what reached the NAS after an action. */
export function wireLines(nas: CoaListener) {
  return {
    mark: (): number => nas.requests().length,
    since: (mark: number): string[] => nas.requests().slice(mark),
    /** Waits until `line` reached the NAS after `mark`. */
    next: (mark: number, line: string) => waitFor(`the NAS to receive "${line}" (got ${JSON.stringify(nas.requests().slice(mark))})`, () => nas.requests().slice(mark).includes(line)),
  };
}
