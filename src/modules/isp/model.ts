// Request and response schemas of the ISP rows (routes.md, Resources: Manufacturer ... Nas), the
// FreeRADIUS rlm_rest rows, RADIUS sessions and authorize attempts.
import { t, type Static } from "elysia";
import { DateText, Enum, Instant, Int, ListQuery, Nullable, Opt, Uuid } from "../../lib/schemas";
import { AddressInput, AddressView } from "../address/model";

/** What the network does with a suspended contract (the network policy's `suspended_mode`, network-service.ts). */
export const SUSPENDED_MODES = ["reject", "reduce", "redirect"] as const;
export type SuspendedMode = (typeof SUSPENDED_MODES)[number];

const Name = t.String({ minLength: 1, maxLength: 200 });
const Description = Opt(t.String({ maxLength: 2000 }));
const Stamps = { created_at: t.String(), updated_at: t.String() };

export const ManufacturerInput = t.Object({ name: Name, description: Description });
export type ManufacturerInput = Static<typeof ManufacturerInput>;
export const Manufacturer = t.Object({
  id: Uuid,
  name: t.String(),
  description: Nullable(t.String()),
  status: t.Boolean(),
  ...Stamps,
});

/**
 * `address` may be null, but a union with null would report a bad address as a whole; the POP
 * routes turn null into absent before validation (dropNullAddress) so errors name the inner field.
 */
export const PopInput = t.Object({ name: Name, description: Description, address: t.Optional(AddressInput) });
export type PopInput = Static<typeof PopInput>;
export const Pop = t.Object({
  id: Uuid,
  name: t.String(),
  description: Nullable(t.String()),
  address: Nullable(AddressView),
  status: t.Boolean(),
  ...Stamps,
});

export const ATTRIBUTE_TYPES = ["string", "integer", "ipaddr", "ipv6addr", "ipv6prefix", "date", "octets"] as const;
/** A RADIUS dictionary name: letters, digits and the punctuation dictionaries use. */
export const ATTRIBUTE_NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$";
export const RadiusAttributeInput = t.Object({
  name: t.String({ pattern: ATTRIBUTE_NAME_PATTERN }),
  manufacturer_id: Opt(Uuid),
  type: Enum([...ATTRIBUTE_TYPES]),
  description: Description,
});
export type RadiusAttributeInput = Static<typeof RadiusAttributeInput>;
export const RadiusAttribute = t.Object({
  id: Uuid,
  name: t.String(),
  manufacturer_id: Nullable(Uuid),
  type: t.String(),
  description: Nullable(t.String()),
  status: t.Boolean(),
  ...Stamps,
});

export const OPERATORS = [":=", "=", "+="] as const;
export const LayoutInput = t.Object({ name: Name, manufacturer_id: Opt(Uuid), description: Description });
export type LayoutInput = Static<typeof LayoutInput>;
export const LayoutAttributeInput = t.Object({
  attribute_id: Uuid,
  operator: Opt(Enum([...OPERATORS])),
  value: t.String({ maxLength: 1000 }),
});
export type LayoutAttributeInput = Static<typeof LayoutAttributeInput>;
export const Layout = t.Object({
  id: Uuid,
  name: t.String(),
  manufacturer_id: Nullable(Uuid),
  description: Nullable(t.String()),
  status: t.Boolean(),
  attributes: t.Array(t.Object({ attribute_id: Uuid, name: t.String(), operator: t.String(), value: t.String() })),
  ...Stamps,
});
export const LayoutVariable = t.Object({ name: t.String(), description: t.String(), example: t.String() });
export const LayoutAttributeParams = t.Object({ id: Uuid, attributeId: Uuid });
export const RenderParams = t.Object({ id: Uuid, contractId: Uuid });
export const RenderQuery = t.Object({ nas_id: t.Optional(Uuid) });
export const Rendered = t.Object({
  layout_id: Uuid,
  contract_id: Uuid,
  attributes: t.Array(t.Object({ name: t.String(), operator: t.String(), value: t.String() })),
});

export const PoolInput = t.Object({
  name: Name,
  version: t.Union([t.Literal(4), t.Literal(6)]),
  cidr: t.String({ minLength: 1, maxLength: 64 }),
  pop_id: Opt(Uuid),
  nas_id: Opt(Uuid),
});
export type PoolInput = Static<typeof PoolInput>;
export const Pool = t.Object({
  id: Uuid,
  name: t.String(),
  version: Int(),
  cidr: t.String(),
  pop_id: Nullable(Uuid),
  nas_id: Nullable(Uuid),
  status: t.Boolean(),
  size: Nullable(t.Integer({ description: "IPv4: every address of the cidr, network and broadcast included; IPv6: null" })),
  used: Int({ description: "distinct addresses inside it held by online sessions or set as contracts' static addresses" }),
  ...Stamps,
});
export const PoolUsage = t.Object({
  size: Nullable(t.Integer()),
  used: Int(),
  items: t.Array(t.Object({ address: t.String(), source: t.Union([t.Literal("session"), t.Literal("contract")]), id: Uuid })),
});

const NasFields = {
  name: Name,
  ip: t.String({ minLength: 2, maxLength: 64 }),
  manufacturer_id: Opt(Uuid),
  pop_id: Opt(Uuid),
  layout_id: Opt(Uuid),
  coa_port: Opt(t.Integer({ minimum: 1, maximum: 65535, description: "UDP port of the NAS's RFC 5176 listener (default 3799)" })),
};
const Secret = t.String({ minLength: 8, maxLength: 128 });
export const NasCreateInput = t.Object({ ...NasFields, secret: Secret });
export const NasUpdateInput = t.Object({ ...NasFields, secret: Opt(Secret) });
export type NasUpdateInput = Static<typeof NasUpdateInput>;
export const Nas = t.Object({
  id: Uuid,
  name: t.String(),
  ip: t.String(),
  manufacturer_id: Nullable(Uuid),
  pop_id: Nullable(Uuid),
  layout_id: Nullable(Uuid),
  coa_port: Int(),
  status: t.Boolean(),
  /** When corpadmin last received an accounting record from it; null: never. */
  last_accounting_at: Nullable(t.String()),
  /** Its online sessions. */
  online: Int(),
  health: Enum(["ok", "quiet", "unknown"]),
  ...Stamps,
});

/** POST /api/isp/nas/{id}/test: the NAS's answer to a Disconnect-Request for no session. */
export const NasTestResult = t.Object({
  outcome: Enum(["ack", "nak", "timeout"]),
  error_cause: Nullable(t.Integer()),
  ms: Int(),
});

// ---- FreeRADIUS rlm_rest ----

export const AuthorizeQuery = t.Object({
  username: t.String({ minLength: 1, maxLength: 253 }),
  password: t.Optional(t.String({ maxLength: 253 })),
  nas_ip: t.String({ minLength: 1, maxLength: 64 }),
});

/** One rlm_rest attribute: `do_xlat: false` so FreeRADIUS never expands `%{...}` in stored text. */
const RlmValue = t.Object({ op: t.String(), value: t.Union([t.String(), t.Array(t.String())]), do_xlat: t.Boolean() });
export const AuthorizeReply = t.Record(t.String(), RlmValue);

export const AccountingBodySchema = t.Record(t.String({ maxLength: 128 }), t.Unknown(), { maxProperties: 256 });

// ---- RADIUS sessions ----

export const SESSION_STATES = ["online", "stale", "closed"] as const;

const RadiusSession = t.Object({
  id: Uuid,
  nas_id: Uuid,
  nas_name: Nullable(t.String()),
  acct_session_id: t.String(),
  username: t.String(),
  contract_id: Nullable(Uuid),
  framed_ip: Nullable(t.String()),
  calling_station_id: Nullable(t.String()),
  started_at: t.String(),
  updated_at: t.String(),
  stopped_at: Nullable(t.String()),
  state: Enum([...SESSION_STATES]),
  input_bytes: Int(),
  output_bytes: Int(),
  input_packets: Int(),
  output_packets: Int(),
  session_time: Int(),
  terminate_cause: Nullable(t.String()),
  created_at: t.String(),
});

const DisconnectResult = t.Object({
  session_id: Uuid,
  kind: Enum(["disconnect", "coa"]),
  outcome: Enum(["ack", "nak", "timeout"]),
  error_cause: Nullable(t.Integer()),
  attempts: Int(),
  at: t.String(),
});

const SessionListQuery = t.Object(
  {
    ...ListQuery.properties,
    state: t.Optional(Enum([...SESSION_STATES])),
    from: t.Optional(Instant),
    to: t.Optional(Instant),
    pop_id: t.Optional(t.String({ format: "uuid", description: "Sessions on the NAS of this POP" })),
    pool_id: t.Optional(t.String({ format: "uuid", description: "Open sessions (online or stale) whose framed address is in this pool's network" })),
  },
  { additionalProperties: true },
);


// ---- RADIUS authorize attempts ----

export const OUTCOMES = ["accept", "reject", "notfound"] as const;
export type AttemptOutcome = (typeof OUTCOMES)[number];

const RadiusAttempt = t.Object({
  id: Uuid,
  at: t.String(),
  username: t.String(),
  nas_id: Nullable(Uuid),
  nas_ip: t.String(),
  outcome: Enum([...OUTCOMES]),
  reason: t.String(),
});

const AttemptListQuery = t.Object(
  { ...ListQuery.properties, outcome: t.Optional(Enum([...OUTCOMES])), from: t.Optional(Instant), to: t.Optional(Instant) },
  { additionalProperties: true },
);

/**
 * The session and attempt rows' schemas, exported as one object rather than one by one: the
 * published document has always shown them inline, and system/openapi-schemas.ts gives a component
 * name to every object schema a model exports by itself.
 */
export const RadiusLogSchemas = { RadiusSession, DisconnectResult, SessionListQuery, RadiusAttempt, AttemptListQuery };

// ---- Traffic usage (routes.md, Network operations additions) ----

export const UsagePeriod = t.Object({
  start: t.String({ description: "Midnight, in the corporation's timezone, of the bucket's first day" }),
  input_bytes: t.Integer(),
  output_bytes: t.Integer(),
  total_bytes: t.Integer(),
  session_seconds: t.Integer(),
});

export const UsageCycle = t.Object({
  start: t.String(),
  end: t.String({ description: "Start of the next cycle (exclusive)" }),
  used_bytes: t.Integer(),
  allowance_bytes: Nullable(t.Integer()),
});

export const ContractUsage = t.Object({
  items: t.Array(UsagePeriod),
  input_bytes: t.Integer(),
  output_bytes: t.Integer(),
  total_bytes: t.Integer(),
  cycle: UsageCycle,
});

export const UsageQuery = t.Object({
  from: t.Optional(DateText),
  to: t.Optional(DateText),
  bucket: t.Optional(Enum(["day", "month"])),
});

export const UsageRow = t.Object({
  contract_id: Uuid,
  number: t.String(),
  username: Nullable(t.String()),
  customer_name: t.String(),
  input_bytes: t.Integer(),
  output_bytes: t.Integer(),
  total_bytes: t.Integer(),
});

export const UsageListQuery = t.Object({ ...ListQuery.properties, from: t.Optional(DateText), to: t.Optional(DateText) }, { additionalProperties: true });

const RatePattern = "^[0-9]+(\\.[0-9]+)?[kKmMgG]$";
const NullableRate = t.Union([t.String(), t.Null()]);

/** PUT /api/isp/policy (routes.md NetworkPolicy): every writable field; left out, its default. */
export const NetworkPolicyInput = t.Object({
  usage_cycle_day: Opt(t.Integer({ minimum: 1, maximum: 28, description: "The day of the month a usage cycle starts (corporation's timezone); default 1" })),
  suspended_mode: Opt(Enum([...SUSPENDED_MODES])),
  suspended_max_upload: Opt(t.String({ pattern: RatePattern, maxLength: 32, description: "reduce: the upload rate of a SUSPENDED contract" })),
  suspended_max_download: Opt(t.String({ pattern: RatePattern, maxLength: 32, description: "reduce: the download rate of a SUSPENDED contract" })),
  suspended_pool_ipv4: Opt(t.String({ minLength: 1, maxLength: 64, description: "redirect: the IPv4 pool whose addresses the NAS sends to its notice page" })),
  trust_unblock_days: Opt(t.Integer({ minimum: 0, maximum: 15, description: "Grace days a trust unblock gives; 0: off (default)" })),
  trust_unblock_every_days: Opt(t.Integer({ minimum: 1, maximum: 365, description: "A contract gets one trust unblock per this many days (default 30)" })),
});

export const NetworkPolicy = t.Object({
  usage_cycle_day: t.Integer(),
  suspended_mode: t.Union([t.Literal("reject"), t.Literal("reduce"), t.Literal("redirect")]),
  suspended_max_upload: NullableRate,
  suspended_max_download: NullableRate,
  suspended_pool_ipv4: t.Union([t.String(), t.Null()]),
  trust_unblock_days: t.Integer(),
  trust_unblock_every_days: t.Integer(),
  updated_at: t.Union([t.String(), t.Null()]),
});
