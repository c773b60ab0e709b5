// The registry of a corporation: cities, external apps and their links, persons, products,
// classifications and contracts. Addresses are embedded as `address_*` columns of their owner
// (a person, a contract): an address has no identity of its own in the API.
import { index, integer, primaryKey, real, sqliteTable, text, unique } from "drizzle-orm/sqlite-core";
import { bool, idColumn, timestamps } from "../columns";

export const cities = sqliteTable(
  "cities",
  {
    id: idColumn(),
    name: text("name").notNull(),
    state: text("state").notNull(),
    country: text("country").notNull(),
    ...timestamps,
  },
  (t) => [unique("cities_name_state_country").on(t.name, t.state, t.country), index("cities_state").on(t.state), index("cities_country").on(t.country)],
);

export const externalApps = sqliteTable(
  "external_apps",
  {
    id: idColumn(),
    name: text("name").notNull().unique(),
    description: text("description"),
    status: bool("status").notNull().default(true),
    key_prefix: text("key_prefix").notNull(),
    /** sha256 hex of the key's secret: the secret is random and long, so a slow hash adds nothing. */
    key_hash: text("key_hash").notNull(),
    ...timestamps,
  },
  (t) => [index("external_apps_status").on(t.status), index("external_apps_key_prefix").on(t.key_prefix)],
);

export const externalLinks = sqliteTable(
  "external_links",
  {
    external_app_id: text("external_app_id").notNull().references(() => externalApps.id, { onDelete: "cascade" }),
    record_type: text("record_type", { enum: ["city", "person", "contract"] }).notNull(),
    record_id: text("record_id").notNull(),
    identity: text("identity").notNull(),
    created_at: text("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.external_app_id, t.record_type, t.identity] }),
    unique("external_links_record").on(t.external_app_id, t.record_type, t.record_id),
    index("external_links_by_record").on(t.record_type, t.record_id),
  ],
);

/** Columns of an embedded Address; `address_line1` null means "no address". */
const addressColumns = {
  address_line1: text("address_line1"),
  address_line2: text("address_line2"),
  address_district: text("address_district"),
  address_postal_code: text("address_postal_code"),
  address_detail: text("address_detail"),
  address_latitude: real("address_latitude"),
  address_longitude: real("address_longitude"),
  address_city_id: text("address_city_id").references(() => cities.id),
};

export const persons = sqliteTable(
  "persons",
  {
    id: idColumn(),
    name: text("name").notNull(),
    display_name: text("display_name"),
    tp_doc_identity: text("tp_doc_identity"),
    doc_identity: text("doc_identity"),
    corporate: bool("corporate").notNull().default(false),
    email: text("email"),
    phone: text("phone"),
    ...addressColumns,
    ...timestamps,
  },
  (t) => [
    // Leads with name (lookups and sorts by name) and covers the ?q fields, so a search counts
    // its matches over this index instead of the whole table.
    index("persons_search").on(t.name, t.display_name, t.doc_identity),
    index("persons_display_name").on(t.display_name),
    index("persons_doc_identity").on(t.doc_identity),
    index("persons_tp_doc_identity").on(t.tp_doc_identity),
    index("persons_email").on(t.email),
    index("persons_phone").on(t.phone),
    index("persons_corporate").on(t.corporate),
    index("persons_city").on(t.address_city_id),
  ],
);

export const classifications = sqliteTable("classifications", {
  id: idColumn(),
  name: text("name").notNull().unique(),
  description: text("description"),
  color: text("color"),
  ...timestamps,
});

export const products = sqliteTable(
  "products",
  {
    id: idColumn(),
    identity: text("identity").notNull().unique(),
    name: text("name").notNull(),
    description: text("description"),
    price: real("price"),
    ...timestamps,
  },
  (t) => [index("products_name").on(t.name), index("products_price").on(t.price)],
);

export const productClassifications = sqliteTable(
  "product_classifications",
  {
    product_id: text("product_id").notNull().references(() => products.id, { onDelete: "cascade" }),
    classification_id: text("classification_id").notNull().references(() => classifications.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.product_id, t.classification_id] }), index("product_classifications_classification").on(t.classification_id)],
);

export const contracts = sqliteTable(
  "contracts",
  {
    id: idColumn(),
    customer_id: text("customer_id").notNull().references(() => persons.id),
    billing_customer_id: text("billing_customer_id").notNull().references(() => persons.id),
    agent_id: text("agent_id").references(() => persons.id),
    number: text("number").notNull().unique(),
    signature_date: text("signature_date"),
    approval_date: text("approval_date"),
    start_date: text("start_date").notNull(),
    end_date: text("end_date"),
    suspension_date: text("suspension_date"),
    cancellation_date: text("cancellation_date"),
    total_value: real("total_value").notNull(),
    contract_status: text("contract_status").notNull(),
    contract_stage: text("contract_stage").notNull(),
    ...addressColumns,
    json_original: text("json_original"),
    json_billing: text("json_billing"),
    json_payment_method: text("json_payment_method"),
    json_items: text("json_items"),
    ...timestamps,
  },
  (t) => [
    index("contracts_customer").on(t.customer_id),
    index("contracts_billing_customer").on(t.billing_customer_id),
    index("contracts_agent").on(t.agent_id),
    index("contracts_status").on(t.contract_status),
    index("contracts_stage").on(t.contract_stage),
    index("contracts_start_date").on(t.start_date),
    index("contracts_signature_date").on(t.signature_date),
    index("contracts_approval_date").on(t.approval_date),
    index("contracts_end_date").on(t.end_date),
    index("contracts_suspension_date").on(t.suspension_date),
    index("contracts_cancellation_date").on(t.cancellation_date),
    index("contracts_total_value").on(t.total_value),
    index("contracts_city").on(t.address_city_id),
  ],
);

/** Connection settings; the password is kept in clear because RADIUS CHAP needs it. */
export const contractConfigs = sqliteTable("contract_configs", {
  contract_id: text("contract_id")
    .primaryKey()
    .references(() => contracts.id, { onDelete: "cascade" }),
  username: text("username").notNull().unique(),
  password: text("password").notNull(),
  min_upload: text("min_upload"),
  max_upload: text("max_upload"),
  min_download: text("min_download"),
  max_download: text("max_download"),
  pool_name_ipv4: text("pool_name_ipv4"),
  ipv4: text("ipv4"),
  poll_name_ipv6: text("poll_name_ipv6"),
  ipv6: text("ipv6"),
  // Fair use (added after the first release: at the end, where ADD COLUMN puts them).
  /** Traffic allowed per usage cycle (download plus upload) in 10^9 bytes; null: unlimited. */
  allowance_gb: real("allowance_gb"),
  /** The speeds in force while the contract is over its allowance. */
  throttle_max_upload: text("throttle_max_upload"),
  throttle_max_download: text("throttle_max_download"),
});

export const contractItems = sqliteTable(
  "contract_items",
  {
    id: idColumn(),
    contract_id: text("contract_id")
      .notNull()
      .references(() => contracts.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
    product_id: text("product_id")
      .notNull()
      .references(() => products.id),
    description: text("description").notNull(),
    quantity: real("quantity").notNull(),
    unit_price: real("unit_price").notNull(),
    ...timestamps,
  },
  (t) => [index("contract_items_contract").on(t.contract_id, t.position), index("contract_items_product").on(t.product_id)],
);

export const contractFlags = sqliteTable(
  "contract_flags",
  {
    contract_id: text("contract_id")
      .notNull()
      .references(() => contracts.id, { onDelete: "cascade" }),
    classification_id: text("classification_id")
      .notNull()
      .references(() => classifications.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.contract_id, t.classification_id] }), index("contract_flags_classification").on(t.classification_id)],
);
