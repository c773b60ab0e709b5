// The first screen: what needs the operator's attention, each figure a link into its screen.
import { call, can, session, type Json, type Page, type Schema } from "../api";
import { t, tx } from "../i18n";
import { Link, Notice, PageHeader, Section, useLoad } from "../ui";

const STATUSES = ["ACTIVE", "INACTIVE", "SUSPENDED", "CANCELLED"];

const total = (path: string, query: Record<string, string> = {}) => call<Page<unknown>>("GET", path, { query: { limit: 1, ...query } }).then((p) => p.total);

function seconds(duration: string): number {
  const m = /^(\d+)([smhdw])$/.exec(duration);
  if (!m) return 3600;
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[m[2] as "s"];
}

function Figure({ value, label, to }: { value: number | string | undefined; label: string; to: string }) {
  return (
    <Link to={to} class="figure">
      <span class="figure-value">{value ?? "…"}</span>
      <span class="figure-label">{label}</span>
    </Link>
  );
}

function ContractsCard() {
  const { data } = useLoad(() => Promise.all(STATUSES.map((s) => total("/api/contract", { contract_status: s }))), []);
  return (
    <Section title={t("dash.contracts")}>
      <div class="figures">
        {STATUSES.map((s, i) => (
          <Figure key={s} value={data?.[i]} label={tx(`enum.${s}`)} to={`/contracts?contract_status=${s}`} />
        ))}
      </div>
    </Section>
  );
}

function SessionsCard() {
  const { data } = useLoad(() => Promise.all([total("/api/isp/session", { state: "online" }), total("/api/isp/session", { state: "stale" })]), []);
  return (
    <Section title={t("dash.sessions")}>
      <div class="figures">
        <Figure value={data?.[0]} label={tx("enum.online")} to="/sessions?state=online" />
        <Figure value={data?.[1]} label={tx("enum.stale")} to="/sessions?state=stale" />
      </div>
    </Section>
  );
}

/**
 * Active webhooks that are failing now: deliveries failed for good, or pending ones already tried
 * (retrying). Read from each webhook's delivery log, so only webhooks that keep one are counted.
 */
async function failingWebhooks(): Promise<Schema<"Webhook">[]> {
  const active = (await call<Json<"webhook.list">>("GET", "/api/webhook", { query: { status: "true", limit: 100 } })).items.filter((w) => w.log_enabled);
  const failing = await Promise.all(
    active.map(async (w) => {
      const [failed, pending] = await Promise.all([
        total(`/api/webhook/${w.id}/deliveries`, { status: "failed" }),
        call<Schema<"DeliveryPage">>("GET", `/api/webhook/${w.id}/deliveries`, { query: { status: "pending", limit: 25 } }),
      ]);
      return failed > 0 || pending.items.some((d) => d.attempts > 0) ? w : null;
    }),
  );
  return failing.filter((w) => w !== null);
}

function WebhooksCard() {
  const { data } = useLoad(() => Promise.all([total("/api/webhook", { status: "false" }), total("/api/webhook"), failingWebhooks()]), []);
  const failing = data?.[2];
  return (
    <Section title={t("dash.webhooks")}>
      <div class="figures">
        <Figure value={failing?.length} label={t("dash.webhooksFailing")} to={failing?.length === 1 ? `/webhooks/${failing[0].id}` : "/webhooks?status=true"} />
        <Figure value={data?.[0]} label={t("dash.webhooksOff")} to="/webhooks?status=false" />
        <Figure value={data?.[1]} label={t("dash.webhooksAll")} to="/webhooks" />
      </div>
    </Section>
  );
}

function ScansCard() {
  const today = new Date().toISOString().slice(0, 10);
  const { data } = useLoad(() => call<Schema<"AllReport">>("GET", "/api/qrcode/report", { query: { from: today, to: today } }), []);
  return (
    <Section title={t("dash.scans")}>
      <div class="figures">
        <Figure value={data?.total} label={t("dash.scansToday")} to="/qrcodes?sort=-scans" />
        <Figure value={data?.unique_visitors} label={t("qr.unique")} to="/qrcodes?sort=-scans" />
      </div>
    </Section>
  );
}

/** Metrics with an endpoint and no value in three of their periods. */
function StaleMetricsCard() {
  const { data, error } = useLoad(async () => {
    const metrics = (await call<Json<"metric.list">>("GET", "/api/metric", { query: { limit: 50 } })).items.filter((m) => m.endpoint && (!m.end_date || new Date(m.end_date) > new Date()));
    const checks = await Promise.all(
      metrics.map(async (m) => {
        const from = new Date(Date.now() - 3 * seconds(m.periodicity) * 1000).toISOString();
        const h = await call<{ items: unknown[] }>("GET", `/api/metric/${m.id}/history`, { query: { from, to: new Date().toISOString() } });
        return h.items.length === 0 ? m : null;
      }),
    );
    return checks.filter((m) => m !== null);
  }, []);
  return (
    <Section title={t("dash.staleMetrics")}>
      {error ? (
        <p>{t("error.generic")}</p>
      ) : !data ? (
        <p>{t("common.loading")}</p>
      ) : data.length === 0 ? (
        <p>{t("dash.noStaleMetrics")}</p>
      ) : (
        <ul>
          {data.map((m) => (
            <li key={m.id}>
              <Link to={`/metrics/${m.id}`}>{m.name}</Link>
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}

export function Dashboard() {
  const user = session.value!.credentials.user;
  return (
    <>
      <PageHeader title={t("nav.dashboard")} />
      {!user.two_factor_required && (
        <Notice kind="warning">
          {t("dash.enable2fa")} <Link to="/account">{t("account.enable")}</Link>
        </Notice>
      )}
      <div class="cards">
        {can("isp", "/api/isp/session") && <SessionsCard />}
        {can("contract") && <ContractsCard />}
        {can("webhook") && <WebhooksCard />}
        {can("qrcode") && <ScansCard />}
        {can("metric") && <StaleMetricsCard />}
      </div>
    </>
  );
}
