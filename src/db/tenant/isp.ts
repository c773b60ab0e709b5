// ISP network records (manufacturers, POPs, RADIUS attributes, layouts, pools, NAS) and the
// RADIUS accounting log, all in the corporation's database.
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { bool, idColumn, timestamps } from "../columns";
import { cities } from "./registry";

export const ispManufacturers = sqliteTable("isp_manufacturers", {
  id: idColumn(),
  name: text("name").notNull().unique(),
  description: text("description"),
  status: bool("status").notNull().default(true),
  ...timestamps,
});

export const ispPops = sqliteTable(
  "isp_pops",
  {
    id: idColumn(),
    name: text("name").notNull().unique(),
    description: text("description"),
    /** The embedded Address, as the registry stores it (`address_line1` null: none). */
    address_line1: text("address_line1"),
    address_line2: text("address_line2"),
    address_district: text("address_district"),
    address_postal_code: text("address_postal_code"),
    address_detail: text("address_detail"),
    address_latitude: real("address_latitude"),
    address_longitude: real("address_longitude"),
    /** The reference keeps a city that a POP's address names from being deleted (409). */
    address_city_id: text("address_city_id").references(() => cities.id),
    status: bool("status").notNull().default(true),
    ...timestamps,
  },
  (t) => [index("isp_pops_city").on(t.address_city_id)],
);

export const ispRadiusAttributes = sqliteTable(
  "isp_radius_attributes",
  {
    id: idColumn(),
    name: text("name").notNull(),
    manufacturer_id: text("manufacturer_id").references(() => ispManufacturers.id),
    type: text("type").notNull(),
    description: text("description"),
    status: bool("status").notNull().default(true),
    ...timestamps,
  },
  // SQLite treats NULLs as distinct in a unique index, so standard attributes (no vendor) are kept
  // unique by name by the service's check inside its write transaction (drizzle-kit cannot emit an
  // expression index such as coalesce(manufacturer_id, '')).
  (t) => [uniqueIndex("isp_radius_attributes_name_vendor").on(t.name, t.manufacturer_id), index("isp_radius_attributes_vendor").on(t.manufacturer_id)],
);

export const ispLayouts = sqliteTable(
  "isp_layouts",
  {
    id: idColumn(),
    name: text("name").notNull().unique(),
    manufacturer_id: text("manufacturer_id").references(() => ispManufacturers.id),
    description: text("description"),
    status: bool("status").notNull().default(true),
    ...timestamps,
  },
  (t) => [index("isp_layouts_vendor").on(t.manufacturer_id)],
);

export const ispLayoutAttributes = sqliteTable(
  "isp_layout_attributes",
  {
    layout_id: text("layout_id")
      .notNull()
      .references(() => ispLayouts.id, { onDelete: "cascade" }),
    attribute_id: text("attribute_id")
      .notNull()
      .references(() => ispRadiusAttributes.id),
    operator: text("operator").notNull(),
    value: text("value").notNull(),
    /** Attributes render in the order they were first attached. */
    position: integer("position").notNull(),
  },
  (t) => [primaryKey({ columns: [t.layout_id, t.attribute_id] }), index("isp_layout_attributes_attribute").on(t.attribute_id)],
);

export const ispNas = sqliteTable(
  "isp_nas",
  {
    id: idColumn(),
    name: text("name").notNull().unique(),
    /** Canonical text of the address (ipaddr.js toString; IPv4-mapped IPv6 stored as IPv4). */
    ip: text("ip").notNull().unique(),
    /** sha256(salt ‖ secret), hex: what the rlm_rest credential is checked against. */
    secret_hash: text("secret_hash").notNull(),
    secret_salt: text("secret_salt").notNull(),
    /**
     * The secret under AES-256-GCM with the data key (DATA_DIR/data.key), needed to sign RFC 5176
     * requests; null for a NAS whose secret was set before it was kept (set it again).
     */
    secret_enc: text("secret_enc"),
    /** UDP port of the NAS's RFC 5176 (Disconnect/CoA) listener. */
    coa_port: integer("coa_port").notNull().default(3799),
    manufacturer_id: text("manufacturer_id").references(() => ispManufacturers.id),
    pop_id: text("pop_id").references(() => ispPops.id),
    layout_id: text("layout_id").references(() => ispLayouts.id),
    status: bool("status").notNull().default(true),
    ...timestamps,
    // Health (added after the first release: after the timestamps, where ADD COLUMN puts it), kept by the accounting writer in the transaction of each record (accounting-service.ts)
    // so that a list of NAS answers it without reading sessions:
    /** When corpadmin last received an accounting record from it (its clock); null: never. */
    last_accounting_at: text("last_accounting_at"),
    /** Its open sessions (no Stop, no Accounting-On since): +1 by a Start, -1 by a Stop. */
    open_sessions: integer("open_sessions").notNull().default(0),
    /** When silence since its last record makes it quiet: 2 interim intervals, 30 min when none is known. */
    quiet_after: text("quiet_after"),
    /** Set by the nas-health job when it announced the NAS quiet (ISP_AFTER_NAS_QUIET); cleared by its next record. */
    quiet_since: text("quiet_since"),
  },
  (t) => [index("isp_nas_vendor").on(t.manufacturer_id), index("isp_nas_pop").on(t.pop_id), index("isp_nas_layout").on(t.layout_id)],
);

export const ispPools = sqliteTable(
  "isp_pools",
  {
    id: idColumn(),
    name: text("name").notNull().unique(),
    version: integer("version").notNull(),
    /** Canonical CIDR: network address with host bits cleared, then the prefix length. */
    cidr: text("cidr").notNull(),
    pop_id: text("pop_id").references(() => ispPops.id),
    nas_id: text("nas_id").references(() => ispNas.id),
    status: bool("status").notNull().default(true),
    ...timestamps,
  },
  (t) => [index("isp_pools_pop").on(t.pop_id), index("isp_pools_nas").on(t.nas_id)],
);

/**
 * One row per accounting record FreeRADIUS forwarded. A NAS retransmits a record it got no answer
 * for (same session, status and session time, only Acct-Delay-Time grows), so that tuple is the
 * key that makes a retransmission a no-op. The session is the isp_radius_sessions row the record
 * was folded into, not the Acct-Session-Id alone: a NAS reuses those after a restart.
 */
export const ispRadiusAccounting = sqliteTable(
  "isp_radius_accounting",
  {
    id: idColumn(),
    nas_id: text("nas_id").notNull(),
    nas_ip: text("nas_ip").notNull(),
    username: text("username").notNull(),
    contract_id: text("contract_id"),
    session_id: text("session_id").notNull(),
    /** The isp_radius_sessions row (NAS, Acct-Session-Id, start) it belongs to; null for records stored before it was kept. */
    radius_session_id: text("radius_session_id"),
    unique_session_id: text("unique_session_id"),
    status_type: text("status_type").notNull(),
    /** Acct-Session-Time in seconds; 0 when the record has none (a Start). */
    session_time: integer("session_time").notNull(),
    input_octets: integer("input_octets"),
    output_octets: integer("output_octets"),
    input_packets: integer("input_packets"),
    output_packets: integer("output_packets"),
    framed_ip: text("framed_ip"),
    framed_ipv6_prefix: text("framed_ipv6_prefix"),
    calling_station_id: text("calling_station_id"),
    terminate_cause: text("terminate_cause"),
    /** Event-Timestamp when the NAS sent one, else when corpadmin received the record. */
    event_at: text("event_at").notNull(),
    received_at: text("received_at").notNull(),
    /** Every attribute of the record as received (name → value or values). */
    attributes: text("attributes").notNull(),
  },
  (t) => [
    uniqueIndex("isp_radius_accounting_session_record").on(t.radius_session_id, t.status_type, t.session_time),
    // No index by user name or contract: nothing reads records that way (sessions and the usage
    // rollups answer those questions), and each index is upkeep on every record stored.
  ],
);

/**
 * One row per RADIUS session (NAS, Acct-Session-Id, start: a NAS reuses ids after a restart), kept
 * in the transaction that writes its accounting record. `stale_at` is when it stops counting as
 * online without a new record (3 interim intervals, or 15 minutes when the NAS sends none);
 * `state` online|closed is stored and "stale" is an open session past its stale_at.
 */
export const ispRadiusSessions = sqliteTable(
  "isp_radius_sessions",
  {
    id: idColumn(),
    nas_id: text("nas_id").notNull(),
    acct_session_id: text("acct_session_id").notNull(),
    username: text("username").notNull(),
    contract_id: text("contract_id"),
    framed_ip: text("framed_ip"),
    calling_station_id: text("calling_station_id"),
    started_at: text("started_at").notNull(),
    updated_at: text("updated_at").notNull(),
    stopped_at: text("stopped_at"),
    /** open: no Stop yet (online or stale, by stale_at); closed: a Stop arrived. */
    open: bool("open").notNull(),
    stale_at: text("stale_at").notNull(),
    input_bytes: integer("input_bytes").notNull().default(0),
    output_bytes: integer("output_bytes").notNull().default(0),
    input_packets: integer("input_packets").notNull().default(0),
    output_packets: integer("output_packets").notNull().default(0),
    session_time: integer("session_time").notNull().default(0),
    terminate_cause: text("terminate_cause"),
    /** When corpadmin last heard of it (its clock). */
    received_at: text("received_at").notNull(),
    created_at: text("created_at").notNull(),
  },
  (t) => [
    index("isp_radius_sessions_key").on(t.nas_id, t.acct_session_id, t.started_at),
    // "Online now": the open sessions, by stale_at, without touching the closed ones.
    index("isp_radius_sessions_open").on(t.open, t.stale_at),
    index("isp_radius_sessions_started").on(t.started_at),
    index("isp_radius_sessions_contract").on(t.contract_id, t.started_at),
    index("isp_radius_sessions_username").on(t.username, t.started_at),
    // No index on received_at: every record moves a session's entry in each index holding a
    // column it updates; retention finds old sessions through the stale_at index instead.
  ],
);

/** RADIUS authorize attempts (the "why can't this customer connect" log); never a password. */
export const ispRadiusAttempts = sqliteTable(
  "isp_radius_attempts",
  {
    id: idColumn(),
    at: text("at").notNull(),
    username: text("username").notNull(),
    nas_id: text("nas_id"),
    nas_ip: text("nas_ip").notNull(),
    outcome: text("outcome").notNull(),
    reason: text("reason").notNull(),
  },
  (t) => [index("isp_radius_attempts_at").on(t.at), index("isp_radius_attempts_username").on(t.username, t.at)],
);

/**
 * Traffic per contract and day (the corporation's timezone), added to by every accounting record
 * in the write that stores it (accounting-service.ts): the growth of the record's session counters
 * since the session's previous record, split over the days it spans. Usage answers read these rows,
 * never the raw records; `corpadmin usage rebuild` recomputes them from the raw records.
 */
export const ispUsageDaily = sqliteTable(
  "isp_usage_daily",
  {
    contract_id: text("contract_id").notNull(),
    /** YYYY-MM-DD in the corporation's timezone. */
    day: text("day").notNull(),
    input_bytes: integer("input_bytes").notNull().default(0),
    output_bytes: integer("output_bytes").notNull().default(0),
    session_seconds: integer("session_seconds").notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.contract_id, t.day] }),
    // Covering: "usage per contract over a period" reads the period's entries of this index only
    // (measured, 1,000 contracts × 30 days: 142 ms through an index on day alone, each row looked up).
    index("isp_usage_daily_day").on(t.day, t.contract_id, t.input_bytes, t.output_bytes),
  ],
);

/**
 * The same traffic per contract and calendar month (YYYY-MM of the daily rows' days): always the
 * sum of that month's daily rows. Added to in the same statement group as the daily rows (one
 * upsert per month a record spans), kept equal by retention (which subtracts what it prunes) and
 * by `corpadmin usage rebuild`. "Usage per contract over a period" reads whole months here and only
 * the days at the period's ends from isp_usage_daily (usage-range.ts).
 */
export const ispUsageMonthly = sqliteTable(
  "isp_usage_monthly",
  {
    contract_id: text("contract_id").notNull(),
    /** YYYY-MM. */
    month: text("month").notNull(),
    input_bytes: integer("input_bytes").notNull().default(0),
    output_bytes: integer("output_bytes").notNull().default(0),
    session_seconds: integer("session_seconds").notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.contract_id, t.month] }),
    // Covering, as isp_usage_daily_day: a month of 10,000 contracts is 10,000 index entries.
    index("isp_usage_monthly_month").on(t.month, t.contract_id, t.input_bytes, t.output_bytes),
  ],
);

/**
 * The corporation's network policy (routes.md NetworkPolicy): one row whose id is "policy"; no
 * row is the defaults (cycle from day 1, suspended contracts rejected, trust unblock off).
 */
export const ispNetworkPolicy = sqliteTable("isp_network_policy", {
  id: text("id").primaryKey(),
  usage_cycle_day: integer("usage_cycle_day").notNull(),
  suspended_mode: text("suspended_mode").notNull(),
  suspended_max_upload: text("suspended_max_upload"),
  suspended_max_download: text("suspended_max_download"),
  suspended_pool_ipv4: text("suspended_pool_ipv4"),
  trust_unblock_days: integer("trust_unblock_days").notNull(),
  trust_unblock_every_days: integer("trust_unblock_every_days").notNull(),
  updated_at: text("updated_at").notNull(),
});

/**
 * What the network was told about a contract beyond its status (network-service.ts): throttled
 * for the cycle starting on throttled_cycle (fair use), and a trust unblock's grace. No row: never
 * throttled nor trusted. Written only by the fair-use checker and the trust-unblock route.
 */
export const ispContractNetwork = sqliteTable("isp_contract_network", {
  contract_id: text("contract_id").primaryKey(),
  /** The start (local date) of the cycle whose allowance the contract passed; null: not throttled. */
  throttled_cycle: text("throttled_cycle"),
  throttled_at: text("throttled_at"),
  /** The last trust unblock given (kept after its grace: one per trust_unblock_every_days). */
  trusted_at: text("trusted_at"),
  /** When the grace ends; null once the fair-use job has ended it. */
  trusted_until: text("trusted_until"),
  updated_at: text("updated_at").notNull(),
});
