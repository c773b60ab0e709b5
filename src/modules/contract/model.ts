// Contract schemas: the local input, the interface document's external-app input, the response.
import { t, type Static } from "elysia";
import { DateText, DateValue, Enum, ListQuery, Money, Opt, Quantity, Uuid } from "../../lib/schemas";
import { AddressExternalInput, AddressInput, AddressView } from "../address/model";
import { Party } from "../person/service";

export const CONTRACT_STATUSES = ["ACTIVE", "INACTIVE", "SUSPENDED", "CANCELLED"] as const;
export const CONTRACT_STAGES = ["PENDING", "INSTALLING", "INSTALLED", "UNINSTALLED"] as const;
export const DATE_FIELDS = ["signature_date", "approval_date", "start_date", "end_date", "suspension_date", "cancellation_date"] as const;
export type DateField = (typeof DATE_FIELDS)[number];

const optText = (max = 200) => Opt(t.String({ maxLength: max }));

/** Fields common to both inputs (everything but the parties and the address). */
const commonFields = {
  number: t.String({ minLength: 1, maxLength: 64 }),
  signature_date: Opt(DateText),
  approval_date: Opt(DateText),
  start_date: DateText,
  end_date: Opt(DateText),
  suspension_date: Opt(DateText),
  cancellation_date: Opt(DateText),
  total_value: Money(),
  contract_status: Opt(Enum([...CONTRACT_STATUSES])),
  contract_stage: Opt(Enum([...CONTRACT_STAGES])),
  json_original: t.Optional(t.Any()),
  json_billing: t.Optional(t.Any()),
  json_payment_method: t.Optional(t.Any()),
  json_items: t.Optional(t.Any()),
};

export const ContractInput = t.Object({
  customer_id: Uuid,
  billing_customer_id: Opt(Uuid),
  agent_id: Opt(Uuid),
  ...commonFields,
  address: AddressInput,
});
export type ContractInput = Static<typeof ContractInput>;

/** The document's Party in a request: identity instead of id. */
export const PartyExternalInput = t.Object({
  identity: t.String({ minLength: 1, maxLength: 128 }),
  name: t.String({ minLength: 1, maxLength: 200 }),
  display_name: optText(),
  tp_doc_identity: optText(32),
  doc_identity: optText(64),
  corporate: Opt(t.Boolean()),
  address: Opt(AddressExternalInput),
});
export type PartyExternalInput = Static<typeof PartyExternalInput>;

export const ContractExternalInput = t.Object({
  identity: t.String({ minLength: 1, maxLength: 128 }),
  customer: PartyExternalInput,
  billing_customer: Opt(PartyExternalInput),
  agent: Opt(PartyExternalInput),
  ...commonFields,
  address: AddressExternalInput,
});
export type ContractExternalInput = Static<typeof ContractExternalInput>;

export const RATE_PATTERN = "^[0-9]+(\\.[0-9]+)?[kKmMgG]$";

// POST /api/contract/{id}/config changes only the fields present (routes.md, ContractConfig): a
// field left out keeps its value, null clears it; username and password are never cleared (left
// out or null: unchanged). Every field is optional, so the OpenAPI document says so too.
export const ContractConfigInput = t.Object({
  username: t.Optional(t.String({ minLength: 1, maxLength: 64, pattern: "^\\S+$" })),
  password: Opt(t.String({ minLength: 4, maxLength: 64 })),
  min_upload: Opt(t.String({ pattern: RATE_PATTERN, maxLength: 32 })),
  max_upload: Opt(t.String({ pattern: RATE_PATTERN, maxLength: 32 })),
  min_download: Opt(t.String({ pattern: RATE_PATTERN, maxLength: 32 })),
  max_download: Opt(t.String({ pattern: RATE_PATTERN, maxLength: 32 })),
  pool_name_ipv4: optText(64),
  ipv4: optText(15),
  poll_name_ipv6: optText(64),
  ipv6: optText(64),
  allowance_gb: Opt(t.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: "Traffic allowed per usage cycle, download plus upload, in 10^9 bytes; null: unlimited (fair use)" })),
  throttle_max_upload: Opt(t.String({ pattern: RATE_PATTERN, maxLength: 32, description: "Upload rate while over the allowance" })),
  throttle_max_download: Opt(t.String({ pattern: RATE_PATTERN, maxLength: 32, description: "Download rate while over the allowance" })),
});
export type ContractConfigInput = Static<typeof ContractConfigInput>;

const NullableText = t.Union([t.String(), t.Null()]);
export const ContractConfig = t.Object({
  username: t.String(),
  password: t.String(),
  min_upload: NullableText,
  max_upload: NullableText,
  min_download: NullableText,
  max_download: NullableText,
  pool_name_ipv4: NullableText,
  ipv4: NullableText,
  poll_name_ipv6: NullableText,
  ipv6: NullableText,
  allowance_gb: t.Union([t.Number(), t.Null()]),
  throttle_max_upload: NullableText,
  throttle_max_download: NullableText,
});
export type ContractConfig = Static<typeof ContractConfig>;

/** Contract.network (routes.md, Network operations additions): what the network does with the contract now. */
export const ContractNetwork = t.Object({
  state: t.Union([t.Literal("normal"), t.Literal("throttled"), t.Literal("suspended"), t.Literal("trusted")]),
  since: t.Union([t.String(), t.Null()]),
  until: t.Union([t.String(), t.Null()]),
  cycle: t.Object({ start: t.String(), end: t.String(), used_bytes: t.Number(), allowance_bytes: t.Union([t.Number(), t.Null()]) }),
});

/** A contract date in a response: midnight in the corporation's timezone (CSV: its date part). */
const NullableDate = t.Union([DateValue(), t.Null()]);

const contractFields = {
  id: Uuid,
  customer: Party,
  billing_customer: Party,
  agent: t.Union([Party, t.Null()]),
  number: t.String(),
  signature_date: NullableDate,
  approval_date: NullableDate,
  start_date: DateValue(),
  end_date: NullableDate,
  cancellation_date: NullableDate,
  suspension_date: NullableDate,
  address: t.Union([AddressView, t.Null()]),
  total_value: t.Number(),
  contract_status: t.String(),
  contract_stage: t.String(),
  original: t.Any(),
  billing: t.Any(),
  payment_method: t.Any(),
  items: t.Any(),
  config: ContractConfig,
  network: ContractNetwork,
  flags: t.Array(t.String()),
  created_at: t.String(),
  updated_at: t.String(),
};
export const Contract = t.Object(contractFields);
export type Contract = Static<typeof Contract>;
export const ContractWithIdentity = t.Object({ ...contractFields, identity: t.String() });

export const ContractItemInput = t.Object({
  product_id: Uuid,
  description: optText(500),
  quantity: Opt(Quantity()),
  unit_price: Opt(Money()),
});
export type ContractItemInput = Static<typeof ContractItemInput>;

export const ContractItem = t.Object({
  id: Uuid,
  product_id: Uuid,
  description: t.String(),
  quantity: t.Number(),
  unit_price: t.Number(),
  total: t.Number(),
  created_at: t.String(),
  updated_at: t.String(),
});
export type ContractItem = Static<typeof ContractItem>;
export const ItemsBody = t.Object({ items: t.Array(ContractItemInput, { maxItems: 500 }) });
export const ItemsResponse = t.Object({ items: t.Array(ContractItem) });

const FlagName = t.String({ minLength: 1, maxLength: 64 });
export const FlagsBody = t.Object({ add: Opt(t.Array(FlagName, { maxItems: 500 })), remove: Opt(t.Array(FlagName, { maxItems: 500 })) });
export type FlagsBody = Static<typeof FlagsBody>;
export const FlagsResponse = t.Object({ flags: t.Array(t.String()) });

/** The contract lists' query: the list convention, with what ?q matches said in the document. */
export const ContractListQuery = t.Object(
  {
    ...ListQuery.properties,
    q: t.Optional(
      t.String({
        maxLength: 200,
        description:
          "Finds contracts whose number, PPPoE username (config.username), or customer's name, display name or document contains this text, ignoring case, and accents from 3 characters on",
      }),
    ),
  },
  { additionalProperties: true },
);
