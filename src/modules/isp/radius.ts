// The FreeRADIUS rlm_rest rows: accounting (and, with contracts, authorize). rlm_rest maps the
// HTTP status to a module code (FINDINGS.md): 200 with attributes → updated, 204 → ok,
// 401 → reject, 404 → notfound, 5xx → fail (accounting: no response, so the NAS retries).
import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { AccountingWriter, parseAccounting } from "./accounting";
import { radiusCaller, radiusNas, type RadiusCaller } from "./radius-auth";

type Caller = RadiusCaller & { basicSecret: string | null };

export const AccountingBodySchema = t.Record(t.String({ maxLength: 128 }), t.Unknown(), { maxProperties: 256 });

export function radiusRoutes(ctx: AppContext) {
  const callers = new WeakMap<Request, Caller>();
  const accounting = new AccountingWriter(ctx);
  // Authentication runs in transform, before validation: without a credential it is 401 whatever
  // the request holds.
  const authenticate = ({ request }: { request: Request }) => void callers.set(request, radiusCaller(ctx, request));

  return new Elysia({ name: "isp-radius", prefix: "/api/isp/radius", tags: ["ISP"] }).post(
    "/accounting",
    async ({ request, body, set }) => {
      const caller = callers.get(request)!;
      const record = parseAccounting(body);
      if (record.status === null) {
        // Accounting-On/Off and the like: acknowledged so the NAS stops resending, not stored.
        if (record.nasIp) radiusNas(caller, record.nasIp);
        set.status = 204;
        return;
      }
      const nas = radiusNas(caller, record.nasIp!);
      await accounting.write(caller.db, record.build(nas.id, null));
      set.status = 204;
    },
    {
      transform: authenticate,
      body: AccountingBodySchema,
      detail: {
        summary: "FreeRADIUS rlm_rest accounting: record Start, Interim-Update and Stop",
        description:
          "HTTP Basic `<corp auth_name>:<NAS secret>` or `X-Api-Key`; the NAS is the one registered at NAS-IP-Address. A repeated record (same NAS, Acct-Session-Id, status and Acct-Session-Time) is ignored.",
        security: [],
      },
    },
  );
}
