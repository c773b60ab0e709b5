// The FreeRADIUS rlm_rest rows: authorize and accounting. rlm_rest maps the
// HTTP status to a module code (FINDINGS.md): 200 with attributes → updated, 204 → ok,
// 401 → reject, 404 → notfound, 5xx → fail (accounting: no response, so the NAS retries).
import { timingSafeEqual } from "node:crypto";
import { Elysia, t } from "elysia";
import type { AppContext } from "../../core/context";
import type { TenantDb } from "../../db/sqlite";
import { notFound } from "../../lib/problem";
import { AccountingWriter, closeNasSessions, parseAccounting } from "./accounting";
import { renderLayout } from "./render";
import { cachedLayout, radiusSnapshot } from "./radius-cache";
import { contractIdByUsername, findContractByUsername } from "../contract/service";
import { radiusCaller, radiusNas, refused, type RadiusCaller } from "./radius-auth";
import type { AttemptLog, AttemptOutcome } from "./attempts";

type Caller = RadiusCaller & { basicSecret: string | null };

export const AuthorizeQuery = t.Object({
  username: t.String({ minLength: 1, maxLength: 253 }),
  password: t.Optional(t.String({ maxLength: 253 })),
  nas_ip: t.String({ minLength: 1, maxLength: 64 }),
});

/** One rlm_rest attribute: `do_xlat: false` so FreeRADIUS never expands `%{...}` in stored text. */
const RlmValue = t.Object({ op: t.String(), value: t.Union([t.String(), t.Array(t.String())]), do_xlat: t.Boolean() });
export const AuthorizeReply = t.Record(t.String(), RlmValue);
type RlmMap = Record<string, { op: string; value: string | string[]; do_xlat: boolean }>;

const digest = (s: string) => Bun.SHA256.hash(s) as Uint8Array;
/** Equal-length digests, so the comparison takes the same time whatever the password. */
const samePassword = (a: string, b: string) => timingSafeEqual(digest(a), digest(b));

export const AccountingBodySchema = t.Record(t.String({ maxLength: 128 }), t.Unknown(), { maxProperties: 256 });

/**
 * The Acct-Interim-Interval the NAS's layout hands out, when it is a plain number: what the NAS
 * was told, since most NAS do not repeat it in their accounting records.
 */
function layoutInterimInterval(snap: ReturnType<typeof radiusSnapshot>, db: TenantDb, layoutId: string | null): number | null {
  if (!layoutId) return null;
  const t = cachedLayout(snap, db, layoutId).templates.find((a) => a.name.toLowerCase() === "acct-interim-interval");
  return t && /^\d{1,6}$/.test(t.value.trim()) && Number(t.value) > 0 ? Number(t.value) : null;
}

export function radiusRoutes(ctx: AppContext, attempts: AttemptLog) {
  const callers = new WeakMap<Request, Caller>();
  const accounting = new AccountingWriter(ctx);
  // Authentication runs in transform, before validation: without a credential it is 401 whatever
  // the request holds.
  const authenticate = ({ request }: { request: Request }) => void callers.set(request, radiusCaller(ctx, request));

  return new Elysia({ name: "isp-radius", prefix: "/api/isp/radius", tags: ["ISP"] })
    .get(
      "/authorize",
      ({ request, query }) => {
        const caller = callers.get(request)!;
        let nasId: string | null = null;
        const attempt = (outcome: AttemptOutcome, reason: string) =>
          attempts.record(caller.db, { username: query.username, nas_id: nasId, nas_ip: query.nas_ip, outcome, reason });
        try {
          const snap = radiusSnapshot(caller.db);
          const nas = radiusNas(caller, query.nas_ip, snap);
          nasId = nas.id;
          if (!nas.layout_id) throw refused("nas-no-layout", "The NAS has no layout");
          const layout = cachedLayout(snap, caller.db, nas.layout_id);
          if (layout.status !== true) throw refused("layout-inactive", "The NAS's layout is inactive");
          const found = findContractByUsername(caller.db, query.username);
          if (!found) throw Object.assign(notFound("User"), { radiusReason: "user-unknown" });
          const { contract } = found;
          if (contract.contract_status !== "ACTIVE") throw refused("contract-inactive", "The contract is not active");
          // An empty password is no password: FreeRADIUS sends `password=` for CHAP and MS-CHAP.
          const password = query.password ? query.password : null;
          if (password !== null && !samePassword(password, found.config.password)) throw refused("bad-password", "Wrong password");
          const attributes = renderLayout(caller.db, nas.layout_id, { contract, config: found.config, password: found.config.password, nas }, layout.templates);
          const reply: RlmMap = {};
          for (const a of attributes) {
            const key = `reply:${a.name}`;
            const prior = reply[key];
            // The same attribute twice: rlm_rest adds one per value with "+=".
            if (prior) reply[key] = { op: "+=", value: [...[prior.value].flat(), a.value], do_xlat: false };
            else reply[key] = { op: a.operator, value: a.value, do_xlat: false };
          }
          if (password === null) reply["control:Cleartext-Password"] = { op: ":=", value: found.config.password, do_xlat: false };
          // Without a password FreeRADIUS checks CHAP/MS-CHAP itself: corpadmin only knows it handed the password over.
          attempt("accept", password === null ? "password-handed-to-freeradius" : "ok");
          return reply;
        } catch (err) {
          const reason = (err as { radiusReason?: string }).radiusReason;
          if (reason) attempt(reason === "user-unknown" ? "notfound" : "reject", reason);
          throw err;
        }
      },
      {
        transform: authenticate,
        query: AuthorizeQuery,
        response: { 200: AuthorizeReply },
        detail: {
          summary: "FreeRADIUS rlm_rest authorize: check a PPPoE user against the contract's connection settings and return the reply attributes",
          description:
            "HTTP Basic `<corp auth_name>:<NAS secret>` or `X-Api-Key`; the NAS is the one registered at nas_ip. 200: the NAS's layout rendered for the contract, plus `control:Cleartext-Password` when no password was sent (CHAP). 401: reject. 404: unknown user name.",
          security: [{ nasBasic: [] }, { apiKey: [] }],
        },
      },
    )
    .post(
    "/accounting",
    async ({ request, body, set }) => {
      const caller = callers.get(request)!;
      const record = parseAccounting(body);
      if (record.status === null) {
        // Accounting-On/Off and the like: acknowledged so the NAS stops resending, not stored;
        // On/Off close the NAS's open sessions (it restarted: none of them survived).
        if (record.nasIp) {
          const nas = radiusNas(caller, record.nasIp);
          if (record.nasRestart) closeNasSessions(caller.db, nas.id, record.nasRestart);
        }
        set.status = 204;
        return;
      }
      const snap = radiusSnapshot(caller.db);
      const nas = radiusNas(caller, record.nasIp, snap);
      const interim = record.interimInterval ?? layoutInterimInterval(snap, caller.db, nas.layout_id);
      await accounting.write(caller.db, record.build(nas.id, contractIdByUsername(caller.db, record.username)), interim);
      set.status = 204;
    },
    {
      transform: authenticate,
      body: AccountingBodySchema,
      detail: {
        summary: "FreeRADIUS rlm_rest accounting: record Start, Interim-Update and Stop",
        description:
          "HTTP Basic `<corp auth_name>:<NAS secret>` or `X-Api-Key`; the NAS is the one registered at NAS-IP-Address. A repeated record (same NAS, Acct-Session-Id, status and Acct-Session-Time) is ignored.",
        security: [{ nasBasic: [] }, { apiKey: [] }],
      },
    },
  );
}
