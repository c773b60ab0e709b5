// Time series drawn by uPlot, always with the same numbers in a table beside it (a canvas says
// nothing to a screen reader).
import { useEffect, useRef } from "preact/hooks";
import type uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { t, fmtNumber, lang } from "./i18n";

/** The x axis's instants (uPlot's seconds) in the chosen language: days over long spans, else times. */
function timeTicks(splits: number[]): string[] {
  const span = splits.length > 1 ? splits[splits.length - 1] - splits[0] : 0;
  const opts: Intl.DateTimeFormatOptions = span > 2 * 86400 ? { day: "2-digit", month: "2-digit" } : span > 86400 ? { day: "2-digit", month: "2-digit", hour: "2-digit", minute: "2-digit" } : { hour: "2-digit", minute: "2-digit" };
  const f = new Intl.DateTimeFormat(lang.value, opts);
  return splits.map((s) => f.format(new Date(s * 1000)));
}

/** The decimals a tick step is written with (uPlot's steps are 1, 2, 2.5 or 5 times a power of ten). */
function decimalsOf(step: number): number {
  for (let d = 0; d < 6; d++) if (Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) < 1e-6) return d;
  return 6;
}

export interface Series {
  label: string;
  values: (number | null)[];
  /** Drawn as a band between two other series (min/max) instead of a line. */
  band?: boolean;
}

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || "#888";
}

export function Chart(props: { title: string; x: number[]; xLabels: string[]; series: Series[]; emptyText: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current || props.x.length === 0) return;
    const colors = [cssVar("--chart-1"), cssVar("--chart-2"), cssVar("--chart-3")];
    const axis = { stroke: cssVar("--fg"), grid: { stroke: cssVar("--border") }, ticks: { stroke: cssVar("--border") } };
    let plot: uPlot | null = null;
    let live = true;
    // uPlot loads with the first chart, not with the console's first screen.
    void import("uplot").then(({ default: UPlot }) => {
      if (!live || !box.current) return;
      plot = new UPlot(
        {
          width: Math.max(280, box.current.clientWidth),
          height: 240,
          series: [{ label: t("chart.when"), value: (_u: uPlot, v: number | null) => (v === null ? "—" : new Date(v * 1000).toLocaleString(lang.value, { dateStyle: "short", timeStyle: "short" })) }, ...props.series.map((s, i) => ({ label: s.label, stroke: colors[i % colors.length], width: 2, dash: s.band ? [4, 4] : undefined }))],
          axes: [
            { ...axis, values: (_u: uPlot, splits: number[]) => timeTicks(splits) },
            // As many decimals as the ticks' step has (0.005 apart: three, 0.25: two), so no two ticks read alike.
            { ...axis, values: (_u: uPlot, splits: number[], _axis: number, _space: number, step: number) => splits.map((v) => fmtNumber(v, decimalsOf(step))) },
          ],
          legend: { show: true },
        },
        [props.x, ...props.series.map((s) => s.values)] as uPlot.AlignedData,
        box.current,
      );
    });
    return () => {
      live = false;
      plot?.destroy();
    };
  }, [props.x, props.series, lang.value]);
  if (props.x.length === 0) return <p class="empty">{props.emptyText}</p>;
  return (
    <div class="chart">
      <div ref={box} class="chart-canvas" role="img" aria-label={props.title} />
      <details class="chart-table" open>
        <summary>{t("chart.table")}</summary>
        {/* Focusable so that a keyboard can scroll a long table. */}
        <div class="table-wrap" tabIndex={0} role="region" aria-label={`${t("chart.table")}: ${props.title}`}>
          <table>
            <caption>{props.title}</caption>
            <thead>
              <tr>
                <th scope="col">{t("chart.when")}</th>
                {props.series.map((s) => (
                  <th scope="col" key={s.label}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {props.xLabels.map((label, i) => (
                <tr key={label + i}>
                  <th scope="row">{label}</th>
                  {props.series.map((s) => (
                    <td key={s.label}>{fmtNumber(s.values[i])}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </div>
  );
}
