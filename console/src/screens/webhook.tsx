// A webhook's event groups, its replay and its delivery log (with resend where a delivery can be resent).
import { useState } from "preact/hooks";
import { call, type Problem, type Json, type Schema } from "../api";
import type { components } from "../api.gen";
import { t, tx } from "../i18n";
import { eventText } from "../labels";
import { deliveryErrorText } from "../messages";
import { ErrorNote, ListView, Section } from "../ui";
import { resendColumn, WebhookReplay } from "./ops";

type EventGroup = components["schemas"]["Webhook"]["groups"][number];
/** Every group a webhook can take, in the list's order: a group the API adds fails `tsc` until it is listed here. */
const GROUPS: Record<EventGroup, true> = {
  CITY_AFTER_INSERT: true, CITY_AFTER_UPDATE: true, CITY_AFTER_DELETE: true,
  PERSON_AFTER_INSERT: true, PERSON_AFTER_UPDATE: true, PERSON_AFTER_DELETE: true,
  PRODUCT_AFTER_INSERT: true, PRODUCT_AFTER_UPDATE: true, PRODUCT_AFTER_DELETE: true,
  CONTRACT_AFTER_INSERT: true, CONTRACT_AFTER_UPDATE: true, CONTRACT_AFTER_DELETE: true,
  EXTERNALAPP_AFTER_INSERT: true, EXTERNALAPP_AFTER_UPDATE: true, EXTERNALAPP_AFTER_DELETE: true,
  METRIC_AFTER_INSERT: true, METRIC_AFTER_UPDATE: true, METRIC_AFTER_DELETE: true,
  QRCODE_AFTER_INSERT: true, QRCODE_AFTER_UPDATE: true, QRCODE_AFTER_DELETE: true,
  ISP_AFTER_THROTTLE: true, ISP_AFTER_RESTORE: true, ISP_AFTER_TRUST_UNBLOCK: true, ISP_AFTER_NAS_QUIET: true, ISP_AFTER_NAS_BACK: true,
};
const EVENT_GROUPS = Object.keys(GROUPS) as EventGroup[];

export function WebhookExtras({ row, replace }: { row: Schema<"Webhook">; replace: (r: Schema<"Webhook">) => void }) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [refresh, setRefresh] = useState(0);
  const reloadLog = () => setRefresh((n) => n + 1);
  const groups: string[] = row.groups;
  const toggle = async (g: EventGroup, on: boolean) => {
    try {
      replace(await call<Json<"webhook.addGroup">>(on ? "POST" : "DELETE", `/api/webhook/${row.id}/group/${g}`));
      setProblem(null);
    } catch (e) {
      setProblem(e as Problem);
    }
  };
  return (
    <>
      <Section title={t("webhook.groups")}>
        <ErrorNote problem={problem} />
        <fieldset class="checks">
          <legend>{t("webhook.groupsLegend")}</legend>
          {EVENT_GROUPS.map((g) => (
            <label key={g} class="check-item">
              <input type="checkbox" checked={groups.includes(g)} onChange={(e) => toggle(g, e.currentTarget.checked)} /> {eventText(g)}
            </label>
          ))}
        </fieldset>
      </Section>
      <WebhookReplay row={row} onChange={reloadLog} />
      <Section title={t("webhook.deliveries")}>
        {!row.log_enabled && <p class="notice warning">{t("webhook.logOff")}</p>}
        <ListView
          refresh={refresh}
          path={`/api/webhook/${row.id}/deliveries`}
          label={t("webhook.deliveries")}
          search={false}
          pageParam="d_"
          filters={[{ name: "status", label: "f.status", options: ["pending", "succeeded", "failed"].map((s) => [s, `enum.${s}`]) }]}
          columns={[
            { key: "created_at", label: "f.created_at" },
            { key: "type", label: "f.type", render: (r) => eventText(r.type) },
            { key: "status", label: "f.status", render: (r) => <span class={`badge ${r.status === "succeeded" ? "ok" : r.status === "failed" ? "bad" : "off"}`}>{tx(`enum.${r.status}`, r.status)}</span> },
            { key: "attempts", label: "f.attempts" },
            { key: "response_status", label: "f.response_status" },
            { key: "error", label: "f.error", render: (r) => deliveryErrorText(r.error) },
            resendColumn(row.id, row.status === true, reloadLog),
          ]}
        />
      </Section>
    </>
  );
}
