// A metric's history chart (by bucket) and the form that adds a value.
import { useMemo, useState } from "preact/hooks";
import { call, type Problem, type Schema } from "../api";
import { Chart } from "../chart";
import { fmtDate, t } from "../i18n";
import { ErrorNote, Section, useLoad } from "../ui";

export function MetricHistory({ row }: { row: Schema<"Metric"> }) {
  const [hours, setHours] = useState(24);
  const [bucket, setBucket] = useState("1h");
  const from = useMemo(() => new Date(Date.now() - hours * 3600000).toISOString(), [hours]);
  const numeric = row.data_type === "Int" || row.data_type === "Float";
  // With a bucket the route answers buckets (its other answer, raw values, is for no bucket).
  const history = useLoad(() => call<Schema<"BucketList">>("GET", `/api/metric/${row.id}/history`, { query: { from, to: new Date().toISOString(), bucket } }), [row.id, from, bucket]);
  const [value, setValue] = useState("");
  const [problem, setProblem] = useState<Problem | null>(null);
  const chart = useMemo(() => {
    const items = history.data?.items ?? [];
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
