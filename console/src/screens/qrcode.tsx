// QR codes: the image (colours, logo, PNG/SVG), a code's scans chart and CSV, and the report of all codes.
import { useMemo, useState } from "preact/hooks";
import { call, fetchBlob, type Json, type Problem, type Schema } from "../api";
import { Chart } from "../chart";
import { fmtDate, t } from "../i18n";
import { download, ErrorNote, Section, useLoad } from "../ui";

function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** All codes' scans in a period, by code, campaign or category; the codes as CSV. */
export function QrReport() {
  const [by, setBy] = useState<"qrcode" | "campaign" | "category">("qrcode");
  const [days, setDays] = useState(30);
  const from = useMemo(() => isoDay(new Date(Date.now() - (days - 1) * 86400000)), [days]);
  const report = useLoad(() => call<Json<"qrcode.getAllReport">>("GET", "/api/qrcode/report", { query: { from, to: isoDay(new Date()), group_by: by } }), [by, from]);
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
              {report.data.groups.map((g) => (
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

export function QrExtras({ row }: { row: Schema<"QrCode"> }) {
  const [dark, setDark] = useState("#000000");
  const [light, setLight] = useState("#ffffff");
  const [logo, setLogo] = useState(false);
  const imagePath = (format: string, size = 256) => `/api/qrcode/${row.id}/image?format=${format}&size=${size}&dark=${dark.slice(1)}&light=${light.slice(1)}${logo && row.logo_id ? "&logo=true" : ""}`;
  const image = useLoad(async () => URL.createObjectURL(await fetchBlob(imagePath("png"))), [row.id, row.updated_at, dark, light, logo]);
  const [days, setDays] = useState(30);
  const from = useMemo(() => isoDay(new Date(Date.now() - (days - 1) * 86400000)), [days]);
  const report = useLoad(() => call<Json<"qrcode.getReport">>("GET", `/api/qrcode/${row.id}/report`, { query: { from, to: isoDay(new Date()) } }), [row.id, from]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const save = (path: string, name: string) => download(path, name).then(() => setProblem(null), (e) => setProblem(e as Problem));
  const series = useMemo(() => {
    const d = report.data?.days ?? [];
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
