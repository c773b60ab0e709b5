// The detail sections beyond the generic form: key rotation, webhook groups and delivery log, QR
// image and scans chart, metric history, layout attributes with the render preview, user 2FA
// reset, workgroup members and grants, corporation status, feature actions.
import { useMemo, useState } from "preact/hooks";
import { call, fetchBlob, session, type Page, type Problem, type Row } from "../api";
import { Chart } from "../chart";
import { fmtDate, lang, t, tx } from "../i18n";
import { eventText, permissionText, serviceText } from "../labels";
import { deliveryErrorText } from "../messages";
import { ConfirmButton, download, ErrorNote, Facts, Form, ListView, RefSelect, SecretOnce, Section, StatusBadge, useLoad, type FieldDef } from "../ui";
import { EVENT_GROUPS } from "./defs";
import { ADDRESS_FIELDS, addressOf, addressValues } from "./contracts";
import { resendColumn, UserSessions, WebhookReplay } from "./ops";

export function ExternalAppKey({ row }: { row: Row }) {
  const [key, setKey] = useState<string | null>(null);
  return (
    <Section title={t("extapp.key")}>
      <p>{t("extapp.prefix", { prefix: row.key_prefix ?? "" })}</p>
      {key && <SecretOnce label={t("f.api_key")} value={key} />}
      <ConfirmButton
        danger
        label={t("extapp.rotate")}
        message={t("extapp.rotateConfirm", { name: row.name })}
        onConfirm={async () => setKey((await call<Row>("POST", `/api/externalapp/${row.id}/key`)).api_key)}
      />
    </Section>
  );
}

export function WebhookExtras({ row, replace }: { row: Row; replace: (r: Row) => void }) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [refresh, setRefresh] = useState(0);
  const reloadLog = () => setRefresh((n) => n + 1);
  const groups: string[] = row.groups ?? [];
  const toggle = async (g: string, on: boolean) => {
    try {
      replace(await call<Row>(on ? "POST" : "DELETE", `/api/webhook/${row.id}/group/${g}`));
      setProblem(null);
    } catch (e) {
      setProblem(e as Problem);
    }
  };
  return (
    <>
      <Section title={t("webhook.groups")}>
        <ErrorNote problem={problem} />
        <fieldset class="checks">
          <legend>{t("webhook.groupsLegend")}</legend>
          {EVENT_GROUPS.map((g) => (
            <label key={g} class="check-item">
              <input type="checkbox" checked={groups.includes(g)} onChange={(e) => toggle(g, e.currentTarget.checked)} /> {eventText(g)}
            </label>
          ))}
        </fieldset>
      </Section>
      <WebhookReplay row={row} onChange={reloadLog} />
      <Section title={t("webhook.deliveries")}>
        {!row.log_enabled && <p class="notice warning">{t("webhook.logOff")}</p>}
        <ListView
          refresh={refresh}
          path={`/api/webhook/${row.id}/deliveries`}
          label={t("webhook.deliveries")}
          search={false}
          pageParam="d_"
          filters={[{ name: "status", label: "f.status", options: ["pending", "succeeded", "failed"].map((s) => [s, `enum.${s}`]) }]}
          columns={[
            { key: "created_at", label: "f.created_at" },
            { key: "type", label: "f.type", render: (r) => eventText(r.type) },
            { key: "status", label: "f.status", render: (r) => <span class={`badge ${r.status === "succeeded" ? "ok" : r.status === "failed" ? "bad" : "off"}`}>{tx(`enum.${r.status}`, r.status)}</span> },
            { key: "attempts", label: "f.attempts" },
            { key: "response_status", label: "f.response_status" },
            { key: "error", label: "f.error", render: (r) => deliveryErrorText(r.error) },
            resendColumn(row.id, row.status === true, reloadLog),
          ]}
        />
      </Section>
    </>
  );
}

function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** All codes' scans in a period, by code, campaign or category; the codes as CSV. */
export function QrReport() {
  const [by, setBy] = useState<"qrcode" | "campaign" | "category">("qrcode");
  const [days, setDays] = useState(30);
  const from = useMemo(() => isoDay(new Date(Date.now() - (days - 1) * 86400000)), [days]);
  const report = useLoad(() => call<Row>("GET", "/api/qrcode/report", { query: { from, to: isoDay(new Date()), group_by: by } }), [by, from]);
  const [problem, setProblem] = useState<Problem | null>(null);
  return (
    <Section title={t("qr.report")}>
      <div class="toolbar">
        <label for="qr-report-by">{t("qr.groupBy")}</label>
        <select id="qr-report-by" value={by} onChange={(e) => setBy(e.currentTarget.value as "qrcode")}>
          <option value="qrcode">{t("r.qrcode")}</option>
          <option value="campaign">{t("f.campaign")}</option>
          <option value="category">{t("f.category")}</option>
        </select>
        {[7, 30, 90].map((n) => (
          <button type="button" key={n} aria-pressed={days === n} onClick={() => setDays(n)}>
            {t("qr.lastDays", { n })}
          </button>
        ))}
        <button type="button" onClick={() => download("/api/qrcode/export?format=csv", "qrcodes.csv").then(() => setProblem(null), (e) => setProblem(e as Problem))}>
          {t("qr.exportCsv")}
        </button>
      </div>
      <ErrorNote problem={report.error ?? problem} />
      {report.data && (
        <div class="table-wrap">
          <table>
            <caption>{t("qr.totals", { total: report.data.total, unique: report.data.unique_visitors })}</caption>
            <thead>
              <tr>
                <th scope="col">{t("f.name")}</th>
                <th scope="col">{t("qr.total")}</th>
                <th scope="col">{t("qr.unique")}</th>
              </tr>
            </thead>
            <tbody>
              {(report.data.groups as Row[]).map((g) => (
                <tr key={g.id ?? "none"}>
                  <td>{g.name ?? "—"}</td>
                  <td>{g.total}</td>
                  <td>{g.unique_visitors}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {report.data.groups.length === 0 && <p class="empty">{t("chart.empty")}</p>}
        </div>
      )}
    </Section>
  );
}

export function QrExtras({ row }: { row: Row }) {
  const [dark, setDark] = useState("#000000");
  const [light, setLight] = useState("#ffffff");
  const [logo, setLogo] = useState(false);
  const imagePath = (format: string, size = 256) => `/api/qrcode/${row.id}/image?format=${format}&size=${size}&dark=${dark.slice(1)}&light=${light.slice(1)}${logo && row.logo_id ? "&logo=true" : ""}`;
  const image = useLoad(async () => URL.createObjectURL(await fetchBlob(imagePath("png"))), [row.id, row.updated_at, dark, light, logo]);
  const [days, setDays] = useState(30);
  const from = useMemo(() => isoDay(new Date(Date.now() - (days - 1) * 86400000)), [days]);
  const report = useLoad(() => call<Row>("GET", `/api/qrcode/${row.id}/report`, { query: { from, to: isoDay(new Date()) } }), [row.id, from]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const save = (path: string, name: string) => download(path, name).then(() => setProblem(null), (e) => setProblem(e as Problem));
  const series = useMemo(() => {
    const d: Row[] = report.data?.days ?? [];
    return {
      x: d.map((x) => new Date(`${x.date}T12:00:00Z`).getTime() / 1000),
      labels: d.map((x) => fmtDate(x.date)),
      series: [
        { label: t("qr.total"), values: d.map((x) => x.total) },
        { label: t("qr.unique"), values: d.map((x) => x.unique_visitors) },
      ],
    };
  }, [report.data]);
  return (
    <>
      <Section title={t("qr.image")}>
        {row.url && (
          <p>
            {t("qr.url")} <code>{row.url}</code>
          </p>
        )}
        <div class="qr-preview">
          {image.data && <img src={image.data} width={256} height={256} alt={t("qr.imageAlt", { name: row.name })} />}
          <ErrorNote problem={image.error ?? problem} />
          <div class="form">
            <div class="field">
              <label for="qr-dark">{t("qr.dark")}</label>
              <input id="qr-dark" type="color" value={dark} onChange={(e) => setDark(e.currentTarget.value)} />
            </div>
            <div class="field">
              <label for="qr-light">{t("qr.light")}</label>
              <input id="qr-light" type="color" value={light} onChange={(e) => setLight(e.currentTarget.value)} />
            </div>
            {row.logo_id && (
              <div class="field check">
                <label for="qr-logo">{t("qr.withLogo")}</label>
                <input id="qr-logo" type="checkbox" checked={logo} onChange={(e) => setLogo(e.currentTarget.checked)} />
              </div>
            )}
            <div class="form-actions">
              <button type="button" onClick={() => save(imagePath("png", 1024), `${row.slug ?? row.name}.png`)}>
                {t("qr.downloadPng")}
              </button>
              <button type="button" onClick={() => save(imagePath("svg", 1024), `${row.slug ?? row.name}.svg`)}>
                {t("qr.downloadSvg")}
              </button>
            </div>
          </div>
        </div>
      </Section>
      <Section title={t("qr.scans")}>
        <div class="toolbar" role="group" aria-label={t("qr.range")}>
          {[7, 30, 90].map((n) => (
            <button type="button" key={n} aria-pressed={days === n} onClick={() => setDays(n)}>
              {t("qr.lastDays", { n })}
            </button>
          ))}
        </div>
        <ErrorNote problem={report.error} />
        {report.data && (
          <>
            <p>
              {t("qr.totals", { total: report.data.total, unique: report.data.unique_visitors })}
            </p>
            <Chart title={t("qr.scans")} x={series.x} xLabels={series.labels} series={series.series} emptyText={t("chart.empty")} />
            <button type="button" onClick={() => save(`/api/qrcode/${row.id}/accesses/export?format=csv&from=${from}T00:00:00Z`, `${row.slug ?? row.name}-scans.csv`)}>
              {t("qr.exportScans")}
            </button>
          </>
        )}
      </Section>
    </>
  );
}

export function MetricHistory({ row }: { row: Row }) {
  const [hours, setHours] = useState(24);
  const [bucket, setBucket] = useState("1h");
  const from = useMemo(() => new Date(Date.now() - hours * 3600000).toISOString(), [hours]);
  const numeric = row.data_type === "Int" || row.data_type === "Float";
  const history = useLoad(() => call<Row>("GET", `/api/metric/${row.id}/history`, { query: { from, to: new Date().toISOString(), bucket } }), [row.id, from, bucket]);
  const [value, setValue] = useState("");
  const [problem, setProblem] = useState<Problem | null>(null);
  const chart = useMemo(() => {
    const items: Row[] = history.data?.items ?? [];
    return {
      x: items.map((b) => new Date(b.start).getTime() / 1000),
      labels: items.map((b) => fmtDate(b.start)),
      series: numeric
        ? [
            { label: t("metric.avg"), values: items.map((b) => b.avg) },
            { label: t("metric.min"), values: items.map((b) => b.min), band: true },
            { label: t("metric.max"), values: items.map((b) => b.max), band: true },
          ]
        : [{ label: t("metric.count"), values: items.map((b) => b.count) }],
    };
  }, [history.data]);
  return (
    <Section title={t("metric.history")}>
      <div class="toolbar">
        <label for="metric-range">{t("metric.range")}</label>
        <select id="metric-range" value={String(hours)} onChange={(e) => setHours(Number(e.currentTarget.value))}>
          {[1, 6, 24, 168, 720].map((h) => (
            <option key={h} value={h}>
              {t("metric.lastHours", { n: h })}
            </option>
          ))}
        </select>
        <label for="metric-bucket">{t("metric.bucket")}</label>
        <select id="metric-bucket" value={bucket} onChange={(e) => setBucket(e.currentTarget.value)}>
          {["1m", "5m", "15m", "1h", "6h", "1d"].map((b) => (
            <option key={b} value={b}>
              {b}
            </option>
          ))}
        </select>
      </div>
      <ErrorNote problem={history.error} />
      {history.data && <Chart title={t("metric.history")} x={chart.x} xLabels={chart.labels} series={chart.series} emptyText={t("chart.empty")} />}
      <form
        class="toolbar"
        onSubmit={async (e) => {
          e.preventDefault();
          let v: unknown = value;
          if (numeric) v = Number(value);
          if (row.data_type === "Bool") v = value === "true";
          try {
            await call("POST", `/api/metric/${row.id}/value`, { body: { value: v } });
            setValue("");
            setProblem(null);
            history.reload();
          } catch (err) {
            setProblem(err as Problem);
          }
        }}
      >
        <label for="metric-value">{t("metric.addValue")}</label>
        <input id="metric-value" value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        <button type="submit">{t("common.add")}</button>
      </form>
      <ErrorNote problem={problem} />
    </Section>
  );
}

export function LayoutExtras({ row, replace }: { row: Row; replace: (r: Row) => void }) {
  const fields: FieldDef[] = [
    { name: "attribute_id", label: "f.attribute", type: "ref", required: true, ref: { path: "/api/isp/radius-attribute", label: (r) => r.name } },
    { name: "operator", label: "f.operator", type: "select", required: true, options: [[":=", ":="], ["=", "="], ["+=", "+="]] },
    { name: "value", label: "f.value", required: true, hint: "hint.template" },
  ];
  const initial = useMemo(() => ({ attribute_id: "", operator: ":=", value: "" }), [row.attributes?.length]);
  const [contract, setContract] = useState("");
  const [nas, setNas] = useState("");
  const render = useLoad(
    () => (contract ? call<Row>("GET", `/api/isp/layout/${row.id}/render/${contract}`, { query: nas ? { nas_id: nas } : {} }) : Promise.resolve(null)),
    [row.id, row.updated_at, contract, nas, row.attributes?.length],
  );
  const variables = useLoad(() => call<{ items: Row[] }>("GET", "/api/isp/layout/variables"), []);
  return (
    <>
      <Section title={t("layout.attributes")}>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{t("f.attribute")}</th>
                <th scope="col">{t("f.operator")}</th>
                <th scope="col">{t("f.value")}</th>
                <th scope="col">{t("common.actions")}</th>
              </tr>
            </thead>
            <tbody>
              {(row.attributes ?? []).map((a: Row) => (
                <tr key={a.attribute_id}>
                  <td>{a.name}</td>
                  <td>
                    <code>{a.operator}</code>
                  </td>
                  <td>
                    <code>{a.value}</code>
                  </td>
                  <td>
                    <ConfirmButton danger label={t("common.remove")} message={t("layout.removeConfirm", { name: a.name })} onConfirm={async () => replace(await call<Row>("DELETE", `/api/isp/layout/${row.id}/attribute/${a.attribute_id}`))} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {(row.attributes ?? []).length === 0 && <p class="empty">{t("layout.noAttributes")}</p>}
        </div>
        <h3>{t("layout.addAttribute")}</h3>
        <Form fields={fields} initial={initial} submitLabel={t("common.add")} onSubmit={async (v) => replace(await call<Row>("POST", `/api/isp/layout/${row.id}/attribute`, { body: v }))} />
        {variables.data && (
          <details>
            <summary>{t("layout.variables")}</summary>
            <ul class="vars">
              {variables.data.items.map((v) => (
                <li key={v.name}>
                  <code>{`{{${v.name}}}`}</code> — {lang.value === "en" ? v.description : tx(`layoutVar.${v.name}`, v.description)}
                </li>
              ))}
            </ul>
          </details>
        )}
      </Section>
      <Section title={t("layout.render")}>
        <div class="form">
          <div class="field">
            <label for="render-contract">{t("f.contract")}</label>
            <RefSelect id="render-contract" path="/api/contract" labelOf={(c) => `${c.number} — ${c.customer?.name ?? ""}`} value={contract} onChange={setContract} />
          </div>
          <div class="field">
            <label for="render-nas">{t("f.nas")}</label>
            <RefSelect id="render-nas" path="/api/isp/nas" labelOf={(n) => `${n.name} (${n.ip})`} value={nas} onChange={setNas} />
          </div>
        </div>
        <ErrorNote problem={render.error} />
        {render.data && (
          <div class="table-wrap" aria-live="polite">
            <table>
              <caption>{t("layout.rendered")}</caption>
              <thead>
                <tr>
                  <th scope="col">{t("f.attribute")}</th>
                  <th scope="col">{t("f.operator")}</th>
                  <th scope="col">{t("f.value")}</th>
                </tr>
              </thead>
              <tbody>
                {(render.data.attributes as Row[]).map((a) => (
                  <tr key={a.name}>
                    <td>{a.name}</td>
                    <td>
                      <code>{a.operator}</code>
                    </td>
                    <td>
                      <code class="rendered-value">{a.value}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
    </>
  );
}

export function UserExtras({ row, replace }: { row: Row; replace: (r: Row) => void }) {
  return (
    <>
    <UserSessions row={row} />
    <Section title={t("account.twoFactor")}>
      <p>{row.two_factor_required ? t("user.twoFactorOn") : t("user.twoFactorOff")}</p>
      {row.two_factor_required && (
        <ConfirmButton danger label={t("user.reset2fa")} message={t("user.reset2faConfirm", { name: row.name })} onConfirm={async () => replace(await call<Row>("POST", `/api/user/${row.id}/2fa/reset`))} />
      )}
    </Section>
    </>
  );
}

export function WorkgroupExtras({ row, reload }: { row: Row; reload: () => void }) {
  const corp = session.value!.credentials.corp;
  const tree = useLoad(() => call<Row>("GET", `/api/corp/${corp}/tree`), [corp]);
  const users = useLoad(() => call<Page<Row>>("GET", "/api/user", { query: { limit: 500 } }), []);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [add, setAdd] = useState("");
  const act = async (method: "POST" | "DELETE", path: string) => {
    try {
      await call(method, `/api/workgroup/${row.id}${path}`);
      setProblem(null);
      reload();
    } catch (e) {
      setProblem(e as Problem);
    }
  };
  const userIds: string[] = row.user_ids ?? [];
  return (
    <>
      <Section title={t("workgroup.members")}>
        <ErrorNote problem={problem} />
        <ul class="chips">
          {userIds.map((id) => {
            const u = users.data?.items.find((x) => x.id === id);
            return (
              <li key={id}>
                {u ? `${u.name} (${u.login})` : id}{" "}
                <ConfirmButton label={t("common.remove")} message={t("workgroup.removeMember", { name: u?.name ?? id })} onConfirm={() => act("DELETE", `/user/${id}`)} />
              </li>
            );
          })}
        </ul>
        <div class="toolbar">
          <label for="wg-add-user">{t("workgroup.addMember")}</label>
          <select id="wg-add-user" value={add} onChange={(e) => setAdd(e.currentTarget.value)}>
            <option value="">—</option>
            {(users.data?.items ?? [])
              .filter((u) => !userIds.includes(u.id))
              .map((u) => (
                <option key={u.id} value={u.id}>
                  {`${u.name} (${u.login})`}
                </option>
              ))}
          </select>
          <button type="button" disabled={!add} onClick={() => act("POST", `/user/${add}`).then(() => setAdd(""))}>
            {t("common.add")}
          </button>
        </div>
      </Section>
      <Section title={t("workgroup.grants")}>
        <ErrorNote problem={tree.error} />
        {(tree.data?.services ?? []).map((s: Row) => {
          const whole = (
            <label class="check-item">
              <input type="checkbox" checked={(row.service_ids ?? []).includes(s.id)} onChange={(e) => act(e.currentTarget.checked ? "POST" : "DELETE", `/service/${s.id}`)} />{" "}
              {t("workgroup.wholeService", { name: serviceText(s.identifier, s.name) })}
            </label>
          );
          // A service without features is one checkbox; one with features groups them under it.
          if (!(s.features ?? []).length) return <div key={s.id} class="check-row">{whole}</div>;
          return (
            <fieldset key={s.id} class="checks">
              <legend>{whole}</legend>
              {(s.features ?? []).map((f: Row) => (
                <label key={f.id} class="check-item">
                  <input type="checkbox" checked={(row.feature_ids ?? []).includes(f.id)} onChange={(e) => act(e.currentTarget.checked ? "POST" : "DELETE", `/feature/${f.id}`)} /> {f.name}
                </label>
              ))}
            </fieldset>
          );
        })}
      </Section>
    </>
  );
}

const CORP_STATUSES = [
  ["ENABLED", "enable", "corp.enableConfirm"],
  ["BLOCKED", "block", "corp.blockConfirm"],
  ["MAINTENANCE", "maintenance", "corp.maintenanceConfirm"],
  ["NEEDS_UPDATE", "needs-update", "corp.needsUpdateConfirm"],
] as const;

export function CorpStatus({ row, replace }: { row: Row; replace: (r: Row) => void }) {
  return (
    <Section title={t("corp.status")}>
      <p>
        {t("corp.current")} <StatusBadge on={row.status === "ENABLED"} onText={tx(`enum.${row.status}`)} offText={tx(`enum.${row.status}`)} />
      </p>
      <div class="toolbar">
        {CORP_STATUSES.filter(([s]) => s !== row.status).map(([s, path, message]) => (
          <ConfirmButton
            key={s}
            danger={s !== "ENABLED"}
            label={t("corp.setStatus", { status: tx(`enum.${s}`) })}
            message={t(message, { name: row.company_name })}
            onConfirm={async () => replace(await call<Row>("POST", `/api/corp/${row.id}/${path}`))}
          />
        ))}
      </div>
    </Section>
  );
}

export function FeatureActions({ row, replace }: { row: Row; replace: (r: Row) => void }) {
  const fields: FieldDef[] = [
    { name: "action", label: "f.action", required: true, hint: "hint.action" },
    { name: "name", label: "f.name" },
  ];
  const initial = useMemo(() => ({ action: "", name: "" }), [row.actions?.length]);
  return (
    <Section title={t("f.actions")}>
      <ul class="chips">
        {(row.actions ?? []).map((a: Row) => (
          <li key={a.id}>
            <code>{a.action}</code>{" "}
            <ConfirmButton
              danger
              label={t("common.remove")}
              message={t("feature.removeAction", { name: a.action })}
              onConfirm={async () => {
                await call("DELETE", `/api/feature/${row.id}/action/${a.id}`);
                replace(await call<Row>("GET", `/api/feature/${row.id}`));
              }}
            />
          </li>
        ))}
      </ul>
      <Form fields={fields} initial={initial} submitLabel={t("common.add")} onSubmit={async (v) => replace(await call<Row>("POST", `/api/feature/${row.id}/action`, { body: { action: v.action, name: v.name || null } }))} />
    </Section>
  );
}

export function PersonAddress({ row, replace }: { row: Row; replace: (r: Row) => void }) {
  const initial = useMemo(() => addressValues(row.address), [row.updated_at]);
  return (
    <Section title={t("person.address")}>
      <Form fields={ADDRESS_FIELDS} initial={initial} submitLabel={t("common.save")} onSubmit={async (v) => replace(await call<Row>("POST", `/api/person/${row.id}/address`, { body: addressOf(v) }))} />
    </Section>
  );
}

/** The services a corporation may use (super-admin): enabled ones can be removed, the others added. */
export function CorpServices({ row }: { row: Row }) {
  const all = useLoad(() => call<Page<Row>>("GET", "/api/service", { query: { limit: 500, sort: "name" } }), []);
  const tree = useLoad(() => call<Row>("GET", `/api/corp/${row.id}/tree`), [row.id]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const enabled = new Set<string>((tree.data?.services ?? []).map((s: Row) => s.id));
  const change = async (method: "POST" | "DELETE", serviceId: string) => {
    await call(method, `/api/corp/${row.id}/service/${serviceId}`);
    tree.reload();
  };
  return (
    <Section title={t("corp.services")}>
      <ErrorNote problem={problem ?? all.error ?? tree.error} />
      <ul class="chips">
        {(all.data?.items ?? []).map((s) =>
          enabled.has(s.id) ? (
            <li key={s.id}>
              {serviceText(s.identifier, s.name)}{" "}
              <ConfirmButton danger label={t("common.remove")} message={t("corp.removeService", { name: serviceText(s.identifier, s.name), corp: row.company_name })} onConfirm={() => change("DELETE", s.id)} />
            </li>
          ) : (
            <li key={s.id} class="off">
              {serviceText(s.identifier, s.name)}{" "}
              <button type="button" onClick={() => change("POST", s.id).then(() => setProblem(null), (e) => setProblem(e as Problem))}>
                {t("common.add")}
              </button>
            </li>
          ),
        )}
      </ul>
    </Section>
  );
}

export function NoteView({ row }: { row: Row }) {
  return (
    <Section title={row.title ?? t("r.note")}>
      <p class="note">{row.content}</p>
    </Section>
  );
}

/** What the user may do in the working corporation, as the server computes it. */
export function UserPermissions({ row }: { row: Row }) {
  const perms = useLoad(() => call<Row>("GET", `/api/user/${row.id}/permissions`), [row.id]);
  return (
    <Section title={t("user.permissions")}>
      <ErrorNote problem={perms.error} />
      {perms.data && (
        <Facts
          items={[
            [t("user.adminOf"), perms.data.admin.length ? perms.data.admin.map(permissionText).join(", ") : t("user.nothing")],
            [t("user.allowed"), perms.data.allow.includes("*") ? "*" : perms.data.allow.length ? t("user.actions", { n: perms.data.allow.length }) : t("user.nothing")],
          ]}
        />
      )}
    </Section>
  );
}

/** The corporation's members (super-admin): add an existing user, remove one. */
export function CorpUsers({ row }: { row: Row }) {
  const members = useLoad(() => call<Page<Row>>("GET", `/api/corp/${row.id}/user`, { query: { limit: 500 } }), [row.id]);
  const [add, setAdd] = useState("");
  const [problem, setProblem] = useState<Problem | null>(null);
  return (
    <Section title={t("corp.users")}>
      <ErrorNote problem={problem ?? members.error} />
      <ul class="chips">
        {(members.data?.items ?? []).map((u) => (
          <li key={u.id}>
            {`${u.name} (${u.login})`}{" "}
            <ConfirmButton
              danger
              label={t("common.remove")}
              message={t("corp.removeUser", { name: u.name, corp: row.company_name })}
              onConfirm={async () => {
                await call("DELETE", `/api/corp/${row.id}/user/${u.id}`);
                members.reload();
              }}
            />
          </li>
        ))}
      </ul>
      <div class="toolbar">
        <label for="corp-add-user">{t("corp.addUser")}</label>
        <RefSelect id="corp-add-user" path="/api/user" labelOf={(u) => `${u.name} (${u.login})`} value={add} onChange={setAdd} />
        <button
          type="button"
          disabled={!add}
          onClick={() =>
            call("POST", `/api/corp/${row.id}/user/${add}`).then(
              () => {
                setAdd("");
                setProblem(null);
                members.reload();
              },
              (e) => setProblem(e as Problem),
            )
          }
        >
          {t("common.add")}
        </button>
      </div>
    </Section>
  );
}

/** Links the contract to its identity in an external application. */
export function ContractLinks({ id }: { id: string }) {
  const fields: FieldDef[] = [
    { name: "external_app_id", label: "f.externalApp", type: "ref", required: true, ref: { path: "/api/externalapp", label: (a) => a.name } },
    { name: "identity", label: "f.externalIdentity", required: true },
  ];
  const [linked, setLinked] = useState<Row | null>(null);
  const initial = useMemo(() => ({ external_app_id: "", identity: "" }), [linked]);
  return (
    <Section title={t("contract.links")}>
      {linked && <p role="status">{t("contract.linked", { app: linked.external_app_name, identity: linked.identity })}</p>}
      <Form fields={fields} initial={initial} submitLabel={t("contract.link")} onSubmit={async (v) => setLinked(await call<Row>("POST", `/api/contract/${id}/externalapp`, { body: v }))} />
    </Section>
  );
}
