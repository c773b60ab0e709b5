// The resources whose screens are the generic list, form and detail (resource.tsx), each with
// the fields routes.md gives it, and the extra sections of those that need more.
import { asText, type Row } from "../api";
import { asImage } from "../ui";
import { fmtDate, fmtMoney, t, tx } from "../i18n";
import { serviceText } from "../labels";
import { resource, type ResourceDef } from "../resource";
import { Link, type FieldDef } from "../ui";
import { PoolUsage } from "./radius";
import { NAS_HEALTH_COLUMNS, NAS_HEALTH_FILTER } from "./nas";
import { NasOps } from "./lazy";
import { CorpServices, CorpStatus, CorpUsers } from "./corp";
import { ExternalAppKey } from "./externalapp";
import { FeatureActions } from "./feature";
import { LayoutExtras } from "./layout";
import { MetricHistory } from "./metric";
import { NoteView } from "./note";
import { PersonAddress } from "./person";
import { QrExtras, QrReport } from "./qrcode";
import { UserExtras, UserPermissions } from "./user";
import { WebhookExtras } from "./webhook";
import { WorkgroupExtras } from "./workgroup";

const ref = (path: string, label: (r: Row) => string = (r) => asText(r.name)) => ({ path, label });
const manufacturerField: FieldDef = { name: "manufacturer_id", label: "f.manufacturer", type: "ref", ref: ref("/api/isp/manufacturer") };
const popField: FieldDef = { name: "pop_id", label: "f.pop", type: "ref", ref: ref("/api/isp/pop") };

export const RESOURCES: ResourceDef[] = [
  resource({
    key: "persons",
    api: "/api/person",
    title: "nav.persons",
    singular: "r.person",
    area: "person",
    columns: [
      { key: "name", label: "f.name" },
      { key: "doc_identity", label: "f.doc_identity" },
      { key: "email", label: "f.email" },
      { key: "phone", label: "f.phone" },
    ],
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "display_name", label: "f.display_name" },
      { name: "tp_doc_identity", label: "f.tp_doc_identity", type: "select", options: [["CPF", "CPF"], ["CNPJ", "CNPJ"]] },
      { name: "doc_identity", label: "f.doc_identity" },
      { name: "corporate", label: "f.corporate", type: "checkbox" },
      { name: "email", label: "f.email", type: "email" },
      { name: "phone", label: "f.phone" },
    ],
    rowHref: (r) => `/customers/${r.id}`,
    extra: (r, _reload, replace) => (
      <>
        <p>
          <Link to={`/customers/${r.id}`}>{t("customer.page")}</Link>
        </p>
        <PersonAddress row={r} replace={replace} />
      </>
    ),
  }),
  resource({
    key: "cities",
    api: "/api/city",
    title: "nav.cities",
    singular: "r.city",
    area: "city",
    columns: [
      { key: "name", label: "f.name" },
      { key: "state", label: "f.state" },
      { key: "country", label: "f.country" },
    ],
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "state", label: "f.state", required: true },
      { name: "country", label: "f.country", required: true },
    ],
  }),
  resource({
    key: "products",
    api: "/api/product",
    title: "nav.products",
    singular: "r.product",
    area: "product",
    columns: [
      { key: "identity", label: "f.identity" },
      { key: "name", label: "f.name" },
      { key: "price", label: "f.price", render: (r) => fmtMoney(r.price) },
      { key: "classifications", label: "f.classifications", sort: false, render: (r) => (r.classifications ?? []).join(", ") || "—" },
    ],
    fields: [
      { name: "identity", label: "f.identity", required: true },
      { name: "name", label: "f.name", required: true },
      { name: "description", label: "f.description", type: "textarea" },
      { name: "price", label: "f.price", type: "amount" },
    ],
  }),
  resource({
    key: "classifications",
    api: "/api/classification",
    title: "nav.classifications",
    singular: "r.classification",
    area: "core",
    columns: [
      { key: "name", label: "f.name" },
      { key: "description", label: "f.description" },
      {
        key: "color",
        label: "f.color",
        render: ({ color }) =>
          color ? (
            <span class="swatch-wrap">
              <span
                class="swatch"
                data-color={color}
                ref={(el) => {
                  if (el) el.style.background = color;
                }}
              />{" "}
              {color}
            </span>
          ) : (
            "—"
          ),
      },
    ],
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "description", label: "f.description" },
      { name: "color", label: "f.color", hint: "hint.color" },
    ],
  }),
  resource({
    key: "external-apps",
    api: "/api/externalapp",
    title: "nav.externalApps",
    singular: "r.externalApp",
    area: "externalapp",
    columns: [
      { key: "name", label: "f.name" },
      { key: "key_prefix", label: "f.key_prefix" },
      { key: "status", label: "f.status" },
    ],
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "description", label: "f.description" },
      { name: "status", label: "f.enabled", type: "checkbox" },
    ],
    once: { field: "api_key", label: "f.api_key" },
    extra: (r) => <ExternalAppKey row={r} />,
  }),
  resource({
    key: "webhooks",
    api: "/api/webhook",
    title: "nav.webhooks",
    singular: "r.webhook",
    area: "webhook",
    toggle: true,
    columns: [
      { key: "name", label: "f.name" },
      { key: "target", label: "f.target" },
      { key: "groups", label: "f.groups", sort: false, render: (r) => String((r.groups ?? []).length) },
      { key: "status", label: "f.status" },
    ],
    filters: [{ name: "status", label: "f.status", options: [["true", "common.active"], ["false", "common.inactive"]] }],
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "target", label: "f.target", type: "url", required: true },
      { name: "email", label: "f.email", type: "email", required: true },
      { name: "body_content", label: "f.body_content", type: "textarea", hint: "hint.bodyContent" },
      { name: "log_enabled", label: "f.log_enabled", type: "checkbox" },
    ],
    once: { field: "secret", label: "f.secret" },
    extra: (r, _reload, replace) => <WebhookExtras row={r} replace={replace} />,
  }),
  resource({
    key: "qrcodes",
    api: "/api/qrcode",
    title: "nav.qrcodes",
    singular: "r.qrcode",
    area: "qrcode",
    toggle: true,
    columns: [
      { key: "name", label: "f.name" },
      { key: "kind", label: "f.kind", render: (r) => tx(`enum.${r.kind}`, r.kind) },
      { key: "slug", label: "f.slug" },
      { key: "scans", label: "f.scans" },
      { key: "status", label: "f.status" },
    ],
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "kind", label: "f.kind", type: "select", required: true, createOnly: true, options: [["dynamic", "enum.dynamic"], ["static", "enum.static"]] },
      { name: "target", label: "f.target", type: "url", hint: "hint.qrTarget" },
      { name: "content", label: "f.content", type: "textarea", hint: "hint.qrContent" },
      { name: "slug", label: "f.slug", createOnly: true, hint: "hint.slug" },
      { name: "campaign_id", label: "f.campaign", type: "ref", ref: ref("/api/qrcode/campaign") },
      { name: "category_id", label: "f.category", type: "ref", ref: ref("/api/qrcode/category") },
      { name: "logo_id", label: "f.logo", type: "ref", ref: ref("/api/qrcode/logo") },
    ],
    toBody: (v, editing) => {
      const body: Record<string, unknown> = { name: v.name, campaign_id: v.campaign_id || null, category_id: v.category_id || null, logo_id: v.logo_id || null };
      if (!editing) body.kind = v.kind || "dynamic";
      if (v.target) body.target = v.target;
      if (v.content) body.content = v.content;
      if (!editing && v.slug) body.slug = v.slug;
      return body;
    },
    toValues: (r) => ({ name: r.name, kind: r.kind, target: r.target ?? "", content: r.content ?? "", slug: r.slug ?? "", campaign_id: r.campaign_id ?? "", category_id: r.category_id ?? "", logo_id: r.logo_id ?? "" }),
    extra: (r) => <QrExtras row={r} />,
    listExtra: () => <QrReport />,
  }),
  resource({
    key: "qr-campaigns",
    api: "/api/qrcode/campaign",
    title: "nav.qrCampaigns",
    singular: "r.qrCampaign",
    area: "qrcode",
    columns: [
      { key: "name", label: "f.name" },
      { key: "start_date", label: "f.start_date" },
      { key: "end_date", label: "f.end_date" },
    ],
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "description", label: "f.description" },
      { name: "start_date", label: "f.start_date", type: "date" },
      { name: "end_date", label: "f.end_date", type: "date" },
    ],
  }),
  resource({
    key: "qr-logos",
    api: "/api/qrcode/logo",
    title: "nav.qrLogos",
    singular: "r.qrLogo",
    area: "qrcode",
    columns: [
      { key: "name", label: "f.name" },
      { key: "content_type", label: "f.type" },
      { key: "size", label: "f.size" },
    ],
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "image", label: "f.image", type: "image", required: true, hint: "hint.logo" },
    ],
    toBody: (v) => ({ name: v.name, content_type: asImage(v.image)?.content_type ?? "", data: asImage(v.image)?.data ?? "" }),
    toValues: (r) => ({ name: r.name, image: r.data ? { content_type: r.content_type, data: r.data } : "" }),
  }),
  resource({
    key: "notes",
    api: "/api/notepad",
    title: "nav.notes",
    singular: "r.note",
    area: "",
    editable: false,
    deletable: false,
    columns: [
      { key: "title", label: "f.title" },
      { key: "created_at", label: "f.created_at" },
    ],
    fields: [
      { name: "title", label: "f.title" },
      { name: "content", label: "f.content", type: "textarea", required: true },
    ],
    nameOf: (r) => r.title ?? fmtDate(r.created_at),
    extra: (r) => <NoteView row={r} />,
  }),
  resource({
    key: "qr-categories",
    api: "/api/qrcode/category",
    title: "nav.qrCategories",
    singular: "r.qrCategory",
    area: "qrcode",
    columns: [
      { key: "name", label: "f.name" },
      { key: "description", label: "f.description" },
    ],
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "description", label: "f.description" },
    ],
  }),
  resource({
    key: "metrics",
    api: "/api/metric",
    title: "nav.metrics",
    singular: "r.metric",
    area: "metric",
    columns: [
      { key: "name", label: "f.name" },
      { key: "data_type", label: "f.data_type" },
      { key: "periodicity", label: "f.periodicity" },
      { key: "endpoint", label: "f.endpoint" },
    ],
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "data_type", label: "f.data_type", type: "select", required: true, options: [["Int", "Int"], ["Float", "Float"], ["Bool", "Bool"], ["Text", "Text"]] },
      { name: "endpoint", label: "f.endpoint", type: "url", hint: "hint.endpoint" },
      { name: "periodicity", label: "f.periodicity", required: true, hint: "hint.duration" },
      { name: "start_date", label: "f.start_date", type: "datetime", required: true },
      { name: "end_date", label: "f.end_date", type: "datetime" },
      { name: "daily_start_time", label: "f.daily_start_time", type: "time" },
      { name: "daily_end_time", label: "f.daily_end_time", type: "time" },
    ],
    extra: (r) => <MetricHistory row={r} />,
  }),
  resource({
    key: "nas",
    api: "/api/isp/nas",
    title: "nav.nas",
    singular: "r.nas",
    area: "isp",
    toggle: true,
    columns: [
      { key: "name", label: "f.name" },
      { key: "ip", label: "f.ip" },
      ...NAS_HEALTH_COLUMNS,
      { key: "status", label: "f.status" },
    ],
    filters: [NAS_HEALTH_FILTER],
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "ip", label: "f.ip", required: true },
      { name: "secret", label: "f.nasSecret", type: "password", hint: "hint.writeOnly" },
      manufacturerField,
      popField,
      { name: "layout_id", label: "f.layout", type: "ref", ref: ref("/api/isp/layout") },
      { name: "coa_port", label: "f.coa_port", type: "number", hint: "hint.coaPort" },
    ],
    extra: (r) => <NasOps nas={r} />,
  }),
  resource({
    key: "layouts",
    api: "/api/isp/layout",
    title: "nav.layouts",
    singular: "r.layout",
    area: "isp",
    toggle: true,
    columns: [
      { key: "name", label: "f.name" },
      { key: "description", label: "f.description" },
      { key: "attributes", label: "f.attributes", sort: false, render: (r) => String((r.attributes ?? []).length) },
      { key: "status", label: "f.status" },
    ],
    fields: [{ name: "name", label: "f.name", required: true }, manufacturerField, { name: "description", label: "f.description" }],
    extra: (r, _reload, replace) => <LayoutExtras row={r} replace={replace} />,
  }),
  resource({
    key: "radius-attributes",
    api: "/api/isp/radius-attribute",
    title: "nav.radiusAttributes",
    singular: "r.radiusAttribute",
    area: "isp",
    toggle: true,
    columns: [
      { key: "name", label: "f.name" },
      { key: "type", label: "f.type" },
      { key: "status", label: "f.status" },
    ],
    fields: [
      { name: "name", label: "f.name", required: true, hint: "hint.attributeName" },
      manufacturerField,
      { name: "type", label: "f.type", type: "select", required: true, options: ["string", "integer", "ipaddr", "ipv6addr", "ipv6prefix", "date", "octets"].map((x) => [x, x]) },
      { name: "description", label: "f.description" },
    ],
  }),
  resource({
    key: "pools",
    api: "/api/isp/pool",
    title: "nav.pools",
    singular: "r.pool",
    area: "isp",
    toggle: true,
    columns: [
      { key: "name", label: "f.name" },
      { key: "cidr", label: "f.cidr" },
      { key: "version", label: "f.version" },
      { key: "size", label: "f.poolSize" },
      { key: "used", label: "f.poolUsed" },
      { key: "status", label: "f.status" },
    ],
    extra: (r) => <PoolUsage row={r} />,
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "version", label: "f.version", type: "select", required: true, options: [["4", "IPv4"], ["6", "IPv6"]] },
      { name: "cidr", label: "f.cidr", required: true },
      popField,
      { name: "nas_id", label: "f.nas", type: "ref", ref: ref("/api/isp/nas") },
    ],
    toBody: (v) => ({ name: v.name, version: Number(v.version || 4), cidr: v.cidr, pop_id: v.pop_id || null, nas_id: v.nas_id || null }),
    toValues: (r) => ({ name: r.name, version: String(r.version), cidr: r.cidr, pop_id: r.pop_id ?? "", nas_id: r.nas_id ?? "" }),
  }),
  resource({
    key: "pops",
    api: "/api/isp/pop",
    title: "nav.pops",
    singular: "r.pop",
    area: "isp",
    toggle: true,
    columns: [
      { key: "name", label: "f.name" },
      { key: "description", label: "f.description" },
      { key: "status", label: "f.status" },
    ],
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "description", label: "f.description" },
    ],
  }),
  resource({
    key: "manufacturers",
    api: "/api/isp/manufacturer",
    title: "nav.manufacturers",
    singular: "r.manufacturer",
    area: "isp",
    toggle: true,
    columns: [
      { key: "name", label: "f.name" },
      { key: "description", label: "f.description" },
      { key: "status", label: "f.status" },
    ],
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "description", label: "f.description" },
    ],
  }),
  resource({
    key: "users",
    api: "/api/user",
    title: "nav.users",
    singular: "r.user",
    area: "user",
    toggle: true,
    columns: [
      { key: "name", label: "f.name" },
      { key: "login", label: "f.login" },
      { key: "email", label: "f.email" },
      { key: "two_factor_required", label: "f.two_factor" },
      { key: "status", label: "f.status" },
    ],
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "email", label: "f.email", type: "email", required: true },
      { name: "login", label: "f.login", required: true },
      { name: "password", label: "f.password", type: "password", createOnly: true, hint: "hint.password" },
    ],
    toBody: (v, editing) => {
      const body: Record<string, unknown> = { name: v.name, email: v.email, login: v.login };
      if (!editing) body.password = v.password;
      return body;
    },
    deleteMessage: "confirm.deleteUser",
    locked: (r) => r.builtin,
    extra: (r, _reload, replace) => (
      <>
        <UserExtras row={r} replace={replace} />
        <UserPermissions row={r} />
      </>
    ),
  }),
  resource({
    key: "workgroups",
    api: "/api/workgroup",
    title: "nav.workgroups",
    singular: "r.workgroup",
    area: "workgroup",
    columns: [
      { key: "name", label: "f.name" },
      { key: "description", label: "f.description" },
      { key: "user_ids", label: "f.members", sort: false, render: (r) => String((r.user_ids ?? []).length) },
    ],
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "description", label: "f.description" },
    ],
    extra: (r, reload) => <WorkgroupExtras row={r} reload={reload} />,
  }),
  resource({
    key: "corporations",
    api: "/api/corp",
    title: "nav.corporations",
    singular: "r.corporation",
    area: "corp",
    superOnly: true,
    columns: [
      { key: "auth_name", label: "f.auth_name" },
      { key: "company_name", label: "f.company_name" },
      { key: "timezone", label: "f.timezone" },
      { key: "status", label: "f.corpStatus", render: (r) => tx(`enum.${r.status}`, r.status) },
    ],
    fields: [
      { name: "auth_name", label: "f.auth_name", required: true },
      { name: "company_name", label: "f.company_name", required: true },
      { name: "trade_name", label: "f.trade_name" },
      { name: "doc_identity", label: "f.doc_identity" },
      { name: "email", label: "f.email", type: "email" },
      { name: "phone", label: "f.phone" },
      { name: "timezone", label: "f.timezone", hint: "hint.timezone" },
    ],
    nameOf: (r) => r.company_name,
    deleteMessage: "confirm.deleteCorp",
    extra: (r, _reload, replace) => (
      <>
        <CorpStatus row={r} replace={replace} />
        <CorpServices row={r} />
        <CorpUsers row={r} />
      </>
    ),
  }),
  resource({
    key: "servers",
    api: "/api/server",
    title: "nav.servers",
    singular: "r.server",
    area: "server",
    superOnly: true,
    columns: [
      { key: "name", label: "f.name" },
      { key: "path", label: "f.path" },
      { key: "corp_count", label: "f.corp_count" },
    ],
    locked: (r) => r.builtin,
    fields: [
      { name: "name", label: "f.name", required: true },
      { name: "path", label: "f.path", required: true, hint: "hint.path" },
      { name: "description", label: "f.description" },
    ],
  }),
  resource({
    key: "services",
    api: "/api/service",
    title: "nav.services",
    singular: "r.service",
    area: "service",
    superOnly: true,
    columns: [
      { key: "identifier", label: "f.identifier" },
      { key: "name", label: "f.name", render: (r) => serviceText(r.identifier, r.name) },
      { key: "builtin", label: "f.builtin" },
    ],
    nameOf: (r) => serviceText(r.identifier, r.name),
    locked: (r) => r.builtin,
    fields: [
      { name: "identifier", label: "f.identifier", required: true },
      { name: "name", label: "f.name", required: true },
      { name: "description", label: "f.description" },
    ],
  }),
  resource({
    key: "features",
    api: "/api/feature",
    title: "nav.features",
    singular: "r.feature",
    area: "service",
    superOnly: true,
    columns: [
      { key: "name", label: "f.name" },
      { key: "description", label: "f.description" },
      { key: "actions", label: "f.actions", sort: false, render: (r) => String((r.actions ?? []).length) },
    ],
    fields: [
      { name: "service_id", label: "f.service", type: "ref", required: true, ref: ref("/api/service", (r) => `${serviceText(asText(r.identifier), asText(r.name))} (${asText(r.identifier)})`) },
      { name: "name", label: "f.name", required: true },
      { name: "description", label: "f.description" },
    ],
    extra: (r, _reload, replace) => <FeatureActions row={r} replace={replace} />,
  }),
];

