// Layout attribute values are templates: literal text with `{{variable}}` placeholders drawn from a
// fixed list (routes.md, Resources: Layout variables). Checked when attached, filled when rendered.
import { invalid } from "../../lib/problem";

export const LAYOUT_VARIABLES = [
  { name: "contract.id", description: "The contract's id", example: "01934f2a-7c1e-7b3d-9a10-2f4c5d6e7f80" },
  { name: "contract.number", description: "The contract number", example: "2025-000123" },
  { name: "contract.contract_status", description: "ACTIVE, INACTIVE, SUSPENDED or CANCELLED", example: "ACTIVE" },
  { name: "contract.contract_stage", description: "PENDING, INSTALLING, INSTALLED or UNINSTALLED", example: "INSTALLED" },
  { name: "contract.config.username", description: "The PPPoE user name of the contract's connection settings", example: "2025-000123" },
  { name: "contract.config.password", description: "The PPPoE password of the contract's connection settings", example: "s3cretPassw0" },
  { name: "contract.config.min_upload", description: "Guaranteed upload rate (bit/s with k, M or G)", example: "5M" },
  { name: "contract.config.max_upload", description: "Maximum upload rate (bit/s with k, M or G)", example: "10M" },
  { name: "contract.config.min_download", description: "Guaranteed download rate (bit/s with k, M or G)", example: "50M" },
  { name: "contract.config.max_download", description: "Maximum download rate (bit/s with k, M or G)", example: "100M" },
  { name: "contract.config.pool_name_ipv4", description: "Name of the IPv4 address pool the NAS assigns from", example: "pppoe-v4" },
  { name: "contract.config.ipv4", description: "Fixed IPv4 address of the connection", example: "100.64.10.25" },
  { name: "contract.config.poll_name_ipv6", description: "Name of the IPv6 pool (the document's spelling)", example: "pppoe-v6" },
  { name: "contract.config.ipv6", description: "Fixed IPv6 address or delegated prefix", example: "2001:db8:100::/56" },
  { name: "contract.network.state", description: "normal, throttled (over its allowance), suspended or trusted (a trust unblock's grace)", example: "normal" },
  { name: "contract.effective.max_upload", description: "The upload rate in force: the throttle rate while throttled, the policy's while suspended in reduce mode, else max_upload", example: "10M" },
  { name: "contract.effective.max_download", description: "The download rate in force: the throttle rate while throttled, the policy's while suspended in reduce mode, else max_download", example: "100M" },
  { name: "contract.effective.pool_name_ipv4", description: "The IPv4 pool in force: the policy's notice pool while suspended in redirect mode, else pool_name_ipv4", example: "pppoe-v4" },
  { name: "customer.name", description: "The customer's name", example: "Maria Silva" },
  { name: "customer.display_name", description: "The customer's display name", example: "Maria" },
  { name: "customer.doc_identity", description: "The customer's document number", example: "123.456.789-09" },
  { name: "nas.name", description: "The NAS the request came through (render: ?nas_id)", example: "bng-centro-01" },
  { name: "nas.ip", description: "That NAS's IP address", example: "10.0.0.1" },
  { name: "pop.name", description: "The POP of that NAS", example: "Centro" },
] as const;

export type VariableName = (typeof LAYOUT_VARIABLES)[number]["name"];
const KNOWN = new Set<string>(LAYOUT_VARIABLES.map((v) => v.name));
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** Throws 400 naming `field` and the first unknown variable of the template. */
export function checkTemplate(template: string, field = "value"): void {
  for (const m of template.matchAll(PLACEHOLDER)) {
    if (!KNOWN.has(m[1])) throw invalid(field, `unknown template variable '${m[1]}'`);
  }
}

export type Variables = Partial<Record<VariableName, string | number | null | undefined>>;

/**
 * Fills every placeholder. Returns null when a variable it uses has no value (or the result is
 * empty): a half-filled value such as `10M/` would be worse for a NAS than no attribute at all.
 */
export function renderTemplate(template: string, vars: Variables): string | null {
  let missing = false;
  const out = template.replace(PLACEHOLDER, (_all, name: string) => {
    const v = vars[name as VariableName];
    if (v === null || v === undefined || v === "") missing = true;
    return v === null || v === undefined ? "" : String(v);
  });
  return missing || out === "" ? null : out;
}
