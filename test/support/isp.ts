// A corporation set up the way an ISP runs PPPoE: the documented MikroTik layout (examples/),
// a NAS using it, and contracts with connection settings, all made through the HTTP routes.
import type { TestApp } from "./helpers";

let n = 0;

export async function must(t: TestApp, token: string, method: string, path: string, body?: unknown) {
  const res = await t.req(method, path, { token, body });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res.body;
}

/** The MikroTik layout of examples/mikrotik-layout.md, built through the API. */
export async function mikrotikLayout(t: TestApp, token: string) {
  const vendor = await must(t, token, "POST", "/api/isp/manufacturer", { name: `MikroTik ${++n}` });
  const rate = await must(t, token, "POST", "/api/isp/radius-attribute", { name: "Mikrotik-Rate-Limit", manufacturer_id: vendor.id, type: "string" });
  const pool = await must(t, token, "POST", "/api/isp/radius-attribute", { name: `Framed-Pool`, type: "string" }).catch(async () => {
    const list = await t.req("GET", "/api/isp/radius-attribute?name=Framed-Pool", { token });
    return list.body.items[0];
  });
  const layout = await must(t, token, "POST", "/api/isp/layout", { name: `MikroTik PPPoE ${n}`, manufacturer_id: vendor.id });
  await must(t, token, "POST", `/api/isp/layout/${layout.id}/attribute`, {
    attribute_id: rate.id,
    operator: ":=",
    value: "{{contract.config.max_upload}}/{{contract.config.max_download}}",
  });
  await must(t, token, "POST", `/api/isp/layout/${layout.id}/attribute`, { attribute_id: pool.id, operator: ":=", value: "{{contract.config.pool_name_ipv4}}" });
  return { vendor, rate, pool, layout };
}

/** A customer, a city and a contract whose connection settings are `config`. */
export async function contractWith(t: TestApp, token: string, config: Record<string, unknown>, status = "ACTIVE") {
  const city = await must(t, token, "POST", "/api/city", { name: `Cidade ${++n}`, state: "SP", country: "BR" });
  const customer = await must(t, token, "POST", "/api/person", { name: `Cliente ${n}`, display_name: `C${n}`, doc_identity: `000.000.000-${n}` });
  const contract = await must(t, token, "POST", "/api/contract", {
    customer_id: customer.id,
    number: `CT-${n}-${Date.now()}`,
    start_date: "2025-01-01",
    total_value: 99.9,
    contract_status: status,
    address: { line1: "Rua 1", city_id: city.id },
  });
  await must(t, token, "POST", `/api/contract/${contract.id}/config`, config);
  return { contract, customer, city };
}
