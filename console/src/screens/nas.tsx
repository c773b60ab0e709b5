// A NAS's health in the NAS list (routes.md "Network operations additions": health, online,
// last_accounting_at), and relative times. The NAS page's sections are in nas-page.tsx (loaded
// with the page).
import type { Nas } from "../api";
import { fmtDate, lang, t } from "../i18n";
import type { Column, Filter } from "../ui";

type NasHealth = Nas["health"];

/** "3 min ago" / "há 3 minutos", in the chosen language; the full date in the tooltip. */
export function relativeTime(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return t("ops.never");
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  const f = new Intl.RelativeTimeFormat(lang.value, { numeric: "auto" });
  const abs = Math.abs(seconds);
  if (abs < 60) return f.format(seconds, "second");
  if (abs < 3600) return f.format(Math.round(seconds / 60), "minute");
  if (abs < 86400) return f.format(Math.round(seconds / 3600), "hour");
  return f.format(Math.round(seconds / 86400), "day");
}

export function RelativeTime({ at }: { at: string | null | undefined }) {
  if (!at) return <>{t("ops.never")}</>;
  return (
    <time dateTime={at} title={fmtDate(at)}>
      {relativeTime(at)}
    </time>
  );
}

const HEALTH_CLASS: Record<NasHealth, string> = { ok: "ok", quiet: "bad", unknown: "off" };

export function HealthBadge({ health }: { health: NasHealth }) {
  return <span class={`badge ${HEALTH_CLASS[health]}`}>{t(`nas.health.${health}`)}</span>;
}

/** The NAS list's health columns. */
export const NAS_HEALTH_COLUMNS: Column<Nas>[] = [
  { key: "health", label: "nas.health", render: (r) => <HealthBadge health={r.health} /> },
  { key: "online", label: "nas.online", render: (r) => String(r.online) },
  { key: "last_accounting_at", label: "nas.lastAccounting", render: (r) => <RelativeTime at={r.last_accounting_at} /> },
];

/** The NAS list's ?health filter. */
export const NAS_HEALTH_FILTER: Filter = { name: "health", label: "nas.health", options: (["ok", "quiet", "unknown"] as const).map((h) => [h, `nas.health.${h}`]) };
