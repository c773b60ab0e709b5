// The customer page's heavier sections, loaded with the page rather than with the console's first
// load: each contract's traffic in its usage cycle against the allowance, and one timeline of the
// changes to the person and to their contracts.
import { useMemo, useState } from "preact/hooks";
import { api, problemOf } from "../api";
import type { components } from "../api.gen";
import { Chart } from "../chart";
import { fmtNumber, lang } from "../i18n";
import { ErrorNote, Facts, Section, useLoad } from "../ui";
import { HistoryTable, loadHistory } from "./history";
import { ot } from "./ops-texts";
import { bytes } from "./radius";

type Usage = components["schemas"]["ContractUsage"];

/** Allowances are in 10^9 bytes (routes.md), so the chart counts decimal gigabytes too. */
const GB = 1e9;

/**
 * A day as the corporation counts it: usage instants are its local midnights written with its
 * offset (`2026-12-01T00:00:00.000-03:00`), so the date is their first ten characters, whatever
 * the browser's timezone.
 */
const day = (iso: string) => new Date(`${iso.slice(0, 10)}T12:00:00Z`).toLocaleDateString(lang.value, { day: "2-digit", month: "2-digit", timeZone: "UTC" });
/** The day before (a cycle's `end` is the next cycle's first day). */
const dayBefore = (iso: string) => new Date(Date.parse(`${iso.slice(0, 10)}T00:00:00Z`) - 86_400_000).toISOString();

/** A contract's daily traffic in the current usage cycle, cumulated, against its allowance. */
export function ContractUsage({ contractId, number, refresh }: { contractId: string; number: string; refresh?: unknown }) {
  const usage = useLoad<Usage>(async () => {
    const { data, error, response } = await api.GET("/api/contract/{id}/usage", { params: { path: { id: contractId } } });
    if (!data) throw problemOf(error, response.status);
    return data;
  }, [contractId, refresh]);
  const u = usage.data;
  const chart = useMemo(() => {
    if (!u) return null;
    // A cycle without traffic says so in words rather than as a flat line.
    if (u.total_bytes === 0) return { x: [], xLabels: [], series: [] };
    let sum = 0;
    const used = u.items.map((p) => (sum += p.total_bytes) / GB);
    const series = [{ label: ot("usage.usedGb"), values: used }];
    if (u.cycle.allowance_bytes !== null) series.push({ label: ot("usage.allowanceGb"), values: u.items.map(() => u.cycle.allowance_bytes! / GB) });
    return { x: u.items.map((p) => Date.parse(p.start) / 1000), xLabels: u.items.map((p) => day(p.start)), series };
  }, [u, lang.value]);
  const allowance = u?.cycle.allowance_bytes ?? null;
  return (
    <div class="usage">
      <h4>{ot("usage.title")}</h4>
      <ErrorNote problem={usage.error} />
      {u && chart && (
        <>
          <Facts
            items={[
              [ot("usage.cycle"), `${day(u.cycle.start)} – ${day(dayBefore(u.cycle.end))}`],
              [
                ot("usage.used"),
                allowance === null
                  ? ot("usage.usedUnlimited", { used: fmtNumber(u.cycle.used_bytes / GB) })
                  : ot("usage.usedOf", { used: fmtNumber(u.cycle.used_bytes / GB), allowance: fmtNumber(allowance / GB), pct: fmtNumber((100 * u.cycle.used_bytes) / allowance, 0) }),
              ],
              [ot("usage.download"), bytes(u.output_bytes)],
              [ot("usage.upload"), bytes(u.input_bytes)],
            ]}
          />
          <Chart title={ot("usage.chartTitle", { number })} x={chart.x} xLabels={chart.xLabels} series={chart.series} emptyText={ot("usage.none")} />
        </>
      )}
    </div>
  );
}

/** One timeline of the changes to these records (the person and their contracts), newest first. */
export function CustomerHistory({ targets, refresh }: { targets: { type: string; id: string }[]; refresh?: unknown }) {
  const [shown, setShown] = useState(10);
  const key = targets.map((x) => x.id).join(",");
  const list = useLoad(async () => {
    // GET /api/history takes one record at a time: the newest `shown` of each, merged.
    const pages = await Promise.all(targets.map((x) => loadHistory({ target_type: x.type, target_id: x.id, limit: Math.min(shown, 500) })));
    const items = pages.flatMap((p) => p.items).sort((a, b) => b.at.localeCompare(a.at) || b.id.localeCompare(a.id));
    const names = new Map<string, string>();
    for (const p of pages) for (const [k, v] of p.names) names.set(k, v);
    const total = pages.reduce((n, p) => n + p.total, 0);
    return { items: items.slice(0, shown), names, page: 1, limit: shown, total };
  }, [key, shown, refresh]);
  return (
    <Section title={ot("history.ofCustomer")}>
      <ErrorNote problem={list.error} />
      <div aria-busy={list.loading}>
        {list.data && (list.data.items.length === 0 ? <p class="empty">{ot("history.none")}</p> : <HistoryTable data={list.data} />)}
        {list.data && list.data.total > list.data.items.length && (
          <button type="button" onClick={() => setShown((n) => n + 10)}>
            {ot("history.more", { shown: list.data.items.length, total: list.data.total })}
          </button>
        )}
      </div>
    </Section>
  );
}
