// The record types of the history (Change.target_type): the console screen of each and the API
// that reads one record. First-load code: the generic record screens ask which type they show.
/** Each target type: the screen of its records (under /console), the API that reads one, its label (a DICT key, or an ops-texts key). */
export const TARGETS: Record<string, { screen?: string; api?: string; label: string }> = {
  contract: { screen: "/contracts", api: "/api/contract", label: "r.contract" },
  person: { screen: "/customers", api: "/api/person", label: "r.person" },
  city: { screen: "/cities", api: "/api/city", label: "r.city" },
  product: { screen: "/products", api: "/api/product", label: "r.product" },
  classification: { screen: "/classifications", api: "/api/classification", label: "r.classification" },
  note: { screen: "/notes", api: "/api/notepad", label: "r.note" },
  externalapp: { screen: "/external-apps", api: "/api/externalapp", label: "r.externalApp" },
  webhook: { screen: "/webhooks", api: "/api/webhook", label: "r.webhook" },
  metric: { screen: "/metrics", api: "/api/metric", label: "r.metric" },
  nas: { screen: "/nas", api: "/api/isp/nas", label: "r.nas" },
  pool: { screen: "/pools", api: "/api/isp/pool", label: "r.pool" },
  layout: { screen: "/layouts", api: "/api/isp/layout", label: "r.layout" },
  attribute: { screen: "/radius-attributes", api: "/api/isp/radius-attribute", label: "r.radiusAttribute" },
  pop: { screen: "/pops", api: "/api/isp/pop", label: "r.pop" },
  manufacturer: { screen: "/manufacturers", api: "/api/isp/manufacturer", label: "r.manufacturer" },
  policy: { label: "history.type.policy" },
  qrcode: { screen: "/qrcodes", api: "/api/qrcode", label: "r.qrcode" },
  campaign: { screen: "/qr-campaigns", api: "/api/qrcode/campaign", label: "r.qrCampaign" },
  category: { screen: "/qr-categories", api: "/api/qrcode/category", label: "r.qrCategory" },
  logo: { screen: "/qr-logos", api: "/api/qrcode/logo", label: "r.qrLogo" },
  user: { screen: "/users", api: "/api/user", label: "r.user" },
  workgroup: { screen: "/workgroups", api: "/api/workgroup", label: "r.workgroup" },
  corp: { screen: "/corporations", api: "/api/corp", label: "r.corporation" },
  server: { screen: "/servers", api: "/api/server", label: "r.server" },
  service: { screen: "/services", api: "/api/service", label: "r.service" },
  feature: { screen: "/features", api: "/api/feature", label: "r.feature" },
  menu: { screen: "/menus", label: "history.type.menu" },
  saferange: { screen: "/safe-ip", label: "history.type.saferange" },
};

/** The generic record screens (resource.tsx keys) and the target type of their records. */
const SCREEN_TYPES: Record<string, string> = Object.fromEntries(
  Object.entries(TARGETS)
    .filter(([type, d]) => d.screen && d.api && !["contract", "person"].includes(type))
    .map(([type, d]) => [d.screen!.slice(1), type]),
);

export function historyTypeOf(screenKey: string): string | undefined {
  return SCREEN_TYPES[screenKey];
}

