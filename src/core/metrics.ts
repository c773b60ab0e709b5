// Service metrics in the Prometheus text format (version 0.0.4). A tiny registry instead of a
// client library: counters, gauges and histograms with labels, plus collectors that compute a
// value at scrape time (open databases, file sizes).
//
// API for other modules (ctx.serviceMetrics):
//   ctx.serviceMetrics.counter("corpadmin_webhook_delivery_failures_total").inc({ corp: authName });
//   ctx.serviceMetrics.gauge("corpadmin_webhook_queue_depth").set({}, pending);
//   ctx.serviceMetrics.histogram("corpadmin_x_seconds", "help", [0.1, 1]).observe({}, seconds);
// Declaring a name again returns the same metric (help and kind must agree), so modules can
// call these at the point of use. The names in STANDARD_METRICS exist from the start (at 0).
// Label values must come from small sets (route patterns, statuses, corporation names): never
// put ids of records, user input or secrets in labels.

export type Labels = Record<string, string | number>;
type Kind = "counter" | "gauge" | "histogram";

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
const escapeHelp = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

// Label names are checked once each: labelKey runs on every request.
const checkedLabelNames = new Set<string>();

export function labelKey(labels: Labels): string {
  const keys = Object.keys(labels);
  if (keys.length === 0) return "";
  if (keys.length > 1) keys.sort();
  for (const k of keys) {
    if (checkedLabelNames.has(k)) continue;
    if (!LABEL.test(k) || k.startsWith("__")) throw new Error(`invalid metric label name ${k}`);
    checkedLabelNames.add(k);
  }
  return keys.map((k) => `${k}="${escapeLabel(String(labels[k]))}"`).join(",");
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

const series = (name: string, key: string, value: number) => `${name}${key ? `{${key}}` : ""} ${formatValue(value)}`;

abstract class Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly kind: Kind,
  ) {}
  abstract lines(): string[];
}

export class Counter extends Metric {
  private values = new Map<string, number>();
  constructor(name: string, help: string) {
    super(name, help, "counter");
    this.values.set("", 0);
  }
  inc(labels: Labels = {}, by = 1): void {
    if (!(by >= 0)) throw new Error(`counter ${this.name} can only increase`);
    this.incKey(labelKey(labels), by);
  }
  /** inc() with the labels already rendered by labelKey() (per-request callers keep the key). */
  incKey(key: string, by = 1): void {
    // The unlabelled zero only stands in until a labelled series exists.
    if (key) this.values.delete("");
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }
  get(labels: Labels = {}): number {
    return this.values.get(labelKey(labels)) ?? 0;
  }
  lines(): string[] {
    return [...this.values].map(([k, v]) => series(this.name, k, v));
  }
}

export class Gauge extends Metric {
  private values = new Map<string, number>();
  private collectors: (() => [Labels, number][])[] = [];
  constructor(name: string, help: string) {
    super(name, help, "gauge");
  }
  set(labels: Labels, value: number): void {
    this.values.set(labelKey(labels), value);
  }
  inc(labels: Labels = {}, by = 1): void {
    const key = labelKey(labels);
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }
  dec(labels: Labels = {}, by = 1): void {
    this.inc(labels, -by);
  }
  get(labels: Labels = {}): number {
    return this.values.get(labelKey(labels)) ?? 0;
  }
  /** Computes series at scrape time; they replace set() values with the same labels. */
  collect(fn: () => [Labels, number][]): void {
    this.collectors.push(fn);
  }
  lines(): string[] {
    const all = new Map(this.values);
    for (const fn of this.collectors) for (const [labels, v] of fn()) all.set(labelKey(labels), v);
    if (all.size === 0) all.set("", 0);
    return [...all].map(([k, v]) => series(this.name, k, v));
  }
}

export const DEFAULT_SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class Histogram extends Metric {
  private values = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(
    name: string,
    help: string,
    readonly buckets: number[],
  ) {
    super(name, help, "histogram");
    if (!buckets.length || buckets.some((b, i) => i > 0 && b <= buckets[i - 1])) throw new Error(`histogram ${name}: buckets must increase`);
  }
  observe(labels: Labels, value: number): void {
    this.observeKey(labelKey(labels), value);
  }
  /** observe() with the labels already rendered by labelKey(). */
  observeKey(key: string, value: number): void {
    let h = this.values.get(key);
    if (!h) this.values.set(key, (h = { counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]) h.counts[i]++;
    h.sum += value;
    h.count++;
  }
  lines(): string[] {
    const out: string[] = [];
    for (const [key, h] of this.values) {
      const sep = key ? `${key},` : "";
      this.buckets.forEach((b, i) => out.push(`${this.name}_bucket{${sep}le="${formatValue(b)}"} ${h.counts[i]}`));
      out.push(`${this.name}_bucket{${sep}le="+Inf"} ${h.count}`);
      out.push(series(`${this.name}_sum`, key, h.sum));
      out.push(series(`${this.name}_count`, key, h.count));
    }
    return out;
  }
}

/** Metrics every instance publishes; the modules that own them feed them when they run. */
export const STANDARD_METRICS: { name: string; kind: "counter" | "gauge"; help: string }[] = [
  { name: "corpadmin_webhook_queue_depth", kind: "gauge", help: "Webhook deliveries waiting to be sent" },
  { name: "corpadmin_webhook_deliveries_total", kind: "counter", help: "Webhook delivery attempts, by outcome" },
  { name: "corpadmin_webhook_delivery_failures_total", kind: "counter", help: "Webhook delivery attempts that failed" },
  { name: "corpadmin_scheduler_runs_total", kind: "counter", help: "Metric collector runs" },
  { name: "corpadmin_scheduler_errors_total", kind: "counter", help: "Metric collector runs that failed" },
  { name: "corpadmin_backups_total", kind: "counter", help: "Scheduled backups, by outcome" },
];

export class MetricsRegistry {
  private metrics = new Map<string, Metric>();

  constructor() {
    for (const m of STANDARD_METRICS) (m.kind === "counter" ? this.counter(m.name, m.help) : this.gauge(m.name, m.help));
  }

  private declare<M extends Metric>(name: string, kind: Kind, make: () => M): M {
    if (!NAME.test(name)) throw new Error(`invalid metric name ${name}`);
    const existing = this.metrics.get(name);
    if (existing) {
      if (existing.kind !== kind) throw new Error(`metric ${name} is a ${existing.kind}, not a ${kind}`);
      return existing as M;
    }
    const m = make();
    this.metrics.set(name, m);
    return m;
  }

  counter(name: string, help = name): Counter {
    return this.declare(name, "counter", () => new Counter(name, help));
  }
  gauge(name: string, help = name): Gauge {
    return this.declare(name, "gauge", () => new Gauge(name, help));
  }
  histogram(name: string, help = name, buckets = DEFAULT_SECONDS_BUCKETS): Histogram {
    return this.declare(name, "histogram", () => new Histogram(name, help, buckets));
  }

  /** The exposition text; a collector that throws drops its own series, not the scrape. */
  render(): string {
    const out: string[] = [];
    for (const m of this.metrics.values()) {
      let lines: string[];
      try {
        lines = m.lines();
      } catch {
        continue;
      }
      out.push(`# HELP ${m.name} ${escapeHelp(m.help)}`, `# TYPE ${m.name} ${m.kind}`, ...lines);
    }
    return out.join("\n") + "\n";
  }
}
