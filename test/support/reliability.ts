// One record of every kind in a corporation, made through the API, and the values that fill any
// path parameter with that corporation's real ids. A create whose route does not exist is skipped.
import type { TestApp } from "./helpers";
import type { Operation } from "./openapi";

export type Values = Record<string, string>;

/** Path parameter names other than `{id}` and the record kind whose id fills them. */
const NAMED: Record<string, string> = {
  userId: "user",
  workgroupId: "workgroup",
  serviceId: "service",
  featureId: "feature",
  contractId: "contract",
  externalAppId: "externalapp",
  attributeId: "isp/radius-attribute",
  corpId: "corp",
  actionId: "action",
  deliveryId: "delivery",
  sessionId: "session",
};

export async function seedFixtures(t: TestApp, token: string, ops: Operation[], tag: string, corpId: string): Promise<Values> {
  const has = (method: string, path: string) => ops.some((o) => o.method === method && o.path === path);
  const ids: Values = { corp: corpId };
  const post = async (kind: string, path: string, body: unknown) => {
    if (!has("POST", path)) return null;
    const res = await t.req("POST", path, { token, body });
    if (res.status !== 200) throw new Error(`fixture ${kind}: POST ${path} → ${res.status} ${res.text.slice(0, 300)}`);
    if (res.body?.id) ids[kind] = res.body.id;
    return res.body;
  };
  const app = await post("externalapp", "/api/externalapp", { name: `erp-${tag}` });
  if (app) ids.externalAppName = app.name;
  const city = await post("city", "/api/city", { name: `City ${tag}`, state: "SP", country: "BR" });
  if (city && app) await t.req("POST", `/api/city/${city.id}/externalapp`, { token, body: { external_app_id: app.id, identity: `city-${tag}` } });
  const person = await post("person", "/api/person", { name: `Person ${tag}`, address: city ? { line1: "Rua 1", city_id: city.id } : null });
  if (person && app) await t.req("POST", `/api/person/${person.id}/externalapp`, { token, body: { external_app_id: app.id, identity: `person-${tag}` } });
  const cls = await post("classification", "/api/classification", { name: `vip-${tag}` });
  const product = await post("product", "/api/product", { identity: `PLAN-${tag}`, name: `Plan ${tag}`, price: 10 });
  if (person && city) {
    const contract = await post("contract", "/api/contract", {
      customer_id: person.id,
      number: `N-${tag}`,
      start_date: "2025-01-01",
      total_value: 10,
      address: { line1: "Rua 2", city_id: city.id },
    });
    if (contract && app) await t.req("POST", `/api/contract/${contract.id}/externalapp`, { token, body: { external_app_id: app.id, identity: `contract-${tag}` } });
  }
  await post("notepad", "/api/notepad", { content: `note ${tag}` });
  // Logged, and aimed at an address the default egress policy refuses: its test event fails at
  // once and leaves a delivery in the log.
  const hook = await post("webhook", "/api/webhook", { name: `hook-${tag}`, target: "http://127.0.0.1:9/hook", email: "ops@example.com", log_enabled: true });
  if (hook && has("POST", "/api/webhook/{id}/test")) {
    const res = await t.req("POST", `/api/webhook/${hook.id}/test`, { token });
    if (res.status !== 200) throw new Error(`fixture delivery: ${res.status} ${res.text}`);
    ids.delivery = res.body.id;
  }
  const metric = await post("metric", "/api/metric", { name: `metric-${tag}`, endpoint: null, data_type: "Int", periodicity: "1h", start_date: "2025-01-01T00:00:00Z", end_date: null, daily_start_time: "00:00", daily_end_time: "00:00" });
  await post("workgroup", "/api/workgroup", { name: `wg-${tag}` });
  await post("user", "/api/user", { name: `User ${tag}`, email: `u-${tag}@example.com`, login: `user-${tag}`, password: "user-password-1" });
  await post("qrcode/campaign", "/api/qrcode/campaign", { name: `camp-${tag}` });
  await post("qrcode/category", "/api/qrcode/category", { name: `cat-${tag}` });
  const PNG_1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
  await post("qrcode/logo", "/api/qrcode/logo", { name: `logo-${tag}`, content_type: "image/png", data: PNG_1x1 });
  await post("qrcode", "/api/qrcode", { name: `qr-${tag}`, kind: "dynamic", target: "https://example.com/x" });
  const manufacturer = await post("isp/manufacturer", "/api/isp/manufacturer", { name: `maker-${tag}` });
  await post("isp/pop", "/api/isp/pop", { name: `pop-${tag}` });
  await post("isp/radius-attribute", "/api/isp/radius-attribute", { name: `Attr-${tag}`, type: "string", manufacturer_id: manufacturer?.id ?? null });
  await post("isp/layout", "/api/isp/layout", { name: `layout-${tag}` });
  await post("isp/pool", "/api/isp/pool", { name: `pool-${tag}`, version: 4, cidr: "10.0.0.0/24" });
  await post("isp/nas", "/api/isp/nas", { name: `nas-${tag}`, ip: `10.9.${tag.length}.1`, secret: "nas-secret-1" });
  const user = ids.user ? (await t.req("GET", `/api/user/${ids.user}`, { token })).body : null;
  if (user?.login) ids["user:login"] = user.login;
  const corp = (await t.req("GET", `/api/corp/${corpId}`, { token })).body;
  ids["auth:domain"] = corp.auth_name;
  // A RADIUS session: an accounting Start from that NAS, as FreeRADIUS's rlm_rest sends it.
  if (ids["isp/nas"] && has("GET", "/api/isp/session")) {
    const authorization = `Basic ${Buffer.from(`${corp.auth_name}:nas-secret-1`).toString("base64")}`;
    const body = { "Acct-Status-Type": "Start", "User-Name": `user-${tag}`, "Acct-Session-Id": `sess-${tag}`, "NAS-IP-Address": `10.9.${tag.length}.1` };
    const res = await t.req("POST", "/api/isp/radius/accounting", { body, headers: { authorization } });
    if (res.status !== 204) throw new Error(`fixture isp/session: ${res.status} ${res.text}`);
    ids["isp/session"] = (await t.req("GET", `/api/isp/session?acct_session_id=sess-${tag}`, { token })).body.items[0].id;
  }
  // A session of the fixture user (its token's jti).
  if (user?.login) {
    const res = await t.req("POST", "/api/login", { body: { corp: corp.auth_name, login: user.login, password: "user-password-1" } });
    if (res.status !== 200) throw new Error(`fixture session: ${res.status} ${res.text}`);
    ids.session = JSON.parse(Buffer.from(res.body.access_token.split(".")[1], "base64url").toString()).jti;
  }
  // A range that admits every IPv4 client, so the corporation stays usable in the suite.
  if (has("POST", "/api/auth/safe-ip/{domain}")) {
    const res = await t.req("POST", `/api/auth/safe-ip/${corp.auth_name}`, { token, body: { range: "0.0.0.0/0", description: `all ${tag}` } });
    if (res.status !== 200) throw new Error(`fixture safe-ip: ${res.status} ${res.text}`);
    ids["auth/safe-ip"] = res.body.id;
  }
  ids["auth:provider"] = "google";
  ids["webhook:group"] = "CITY_AFTER_INSERT";
  const services = (await t.req("GET", "/api/service?identifier=platform.city", { token })).body;
  if (services?.items?.[0]) ids.service = services.items[0].id;
  if (ids.service) await post("feature", "/api/feature", { service_id: ids.service, name: `feature-${tag}` });
  // String-keyed parameters, by the first path segment that names the record kind.
  ids["city:identity"] = `city-${tag}`;
  ids["person:identity"] = `person-${tag}`;
  ids["contract:identity"] = `contract-${tag}`;
  if (product) ids["product:identity"] = product.identity;
  if (cls) ids["classification:name"] = cls.name;
  if (metric) ids["metric:name"] = metric.name;
  return ids;
}

/** Fills an operation's path with a corporation's values; null when a parameter has no value. */
export function pathWith(op: Operation, values: Values): string | null {
  let missing = false;
  const segments = op.path.split("/");
  const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    let key = name;
    if (name === "id") {
      const at = segments.indexOf("{id}");
      key = segments.slice(2, at).filter((seg) => !seg.startsWith("{")).join("/");
    } else if (NAMED[name]) key = NAMED[name];
    else if (values[`${segments[2]}:${name}`] !== undefined) key = `${segments[2]}:${name}`;
    const v = values[key];
    if (v === undefined) missing = true;
    return encodeURIComponent(v ?? "");
  });
  return missing ? null : path;
}
