// Scan records are appended to memory and written in one transaction per corporation shortly
// after (at most FLUSH_MS later, or sooner when a batch fills up) and on shutdown, so a visitor
// never waits for a commit's disk sync.
import type { AppContext } from "../../context";
import { newId } from "../../lib/ids";
import { toIso } from "../../lib/time";

export interface AccessRecord {
  id: string;
  qrcodeId: string;
  at: string;
  ip: string;
  userAgent: string | null;
  referer: string | null;
  bot: boolean;
  visitor: number | null;
}

const FLUSH_MS = 250;
const FLUSH_BATCH = 5_000;
/** Kept in memory while a corporation's database refuses writes; beyond it the oldest go. */
const MAX_PENDING_PER_CORP = 200_000;

const BOT_RE =
  /bot|crawl|spider|slurp|archiver|facebookexternalhit|embedly|preview|whatsapp|telegram|skype|discord|monitor|uptime|pingdom|lighthouse|headless|phantomjs|curl|wget|httpie|python|java\/|okhttp|go-http-client|node-fetch|axios|libwww|scrapy|httpclient|^$/i;

/** A likely crawler or script, by its user agent (none at all counts as one). */
export function isBot(userAgent: string | null): boolean {
  return BOT_RE.test(userAgent ?? "");
}

/** A 53-bit hash of (ip, user agent): the unique-visitor key. */
function visitorKey(ip: string, userAgent: string | null): number {
  return Number(BigInt.asUintN(53, BigInt(Bun.hash(`${ip}\u0000${userAgent ?? ""}`))));
}

const INSERT_SQL =
  "INSERT INTO qr_accesses (id, qrcode_id, at, ip, user_agent, referer, bot, visitor) " +
  // A code deleted while its scans waited here simply loses them (its accesses go with it).
  "SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM qr_codes WHERE id = ?)";
const BUMP_SQL = "UPDATE qr_codes SET scans = scans + ? WHERE id = ?";

export class AccessRecorder {
  private pending = new Map<string, AccessRecord[]>();
  private count = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  constructor(private ctx: AppContext) {}

  record(corpId: string, qrcodeId: string, ip: string, userAgent: string | null, referer: string | null): void {
    const bot = isBot(userAgent);
    const rec: AccessRecord = {
      id: newId(),
      qrcodeId,
      at: toIso(this.ctx.now()),
      ip,
      userAgent,
      referer,
      bot,
      visitor: bot ? null : visitorKey(ip, userAgent),
    };
    let list = this.pending.get(corpId);
    if (!list) this.pending.set(corpId, (list = []));
    list.push(rec);
    this.count++;
    if (this.closed) return;
    if (this.count >= FLUSH_BATCH) this.schedule(0);
    else this.schedule(FLUSH_MS);
  }

  private schedule(ms: number): void {
    if (this.timer && ms > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, ms);
  }

  /** Writes everything pending: one IMMEDIATE transaction per corporation. */
  flush(): void {
    const batches = this.pending;
    this.pending = new Map();
    this.count = 0;
    for (const [corpId, records] of batches) {
      try {
        this.write(corpId, records);
      } catch (err) {
        if (!this.ctx.corps.get(corpId)) continue; // the corporation was deleted: nothing to keep
        this.ctx.logger.error("writing QR accesses failed; kept for the next flush", { corp_id: corpId, count: records.length, error: String(err) });
        const again = this.pending.get(corpId) ?? [];
        const merged = records.concat(again).slice(-MAX_PENDING_PER_CORP);
        this.pending.set(corpId, merged);
        this.count += merged.length;
      }
    }
    if (this.count > 0 && !this.closed) this.schedule(FLUSH_MS * 4);
  }

  private write(corpId: string, records: AccessRecord[]): void {
    const client = this.ctx.tenants.get(corpId).$client;
    const insert = client.query(INSERT_SQL);
    const bump = client.query(BUMP_SQL);
    client
      .transaction(() => {
        const perCode = new Map<string, number>();
        for (const r of records) {
          const res = insert.run(r.id, r.qrcodeId, r.at, r.ip, r.userAgent, r.referer, r.bot ? 1 : 0, r.visitor, r.qrcodeId);
          if (res.changes) perCode.set(r.qrcodeId, (perCode.get(r.qrcodeId) ?? 0) + 1);
        }
        for (const [codeId, n] of perCode) bump.run(n, codeId);
      })
      .immediate();
  }

  /** Shutdown: stop the timer and write what is left. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flush();
  }
}
