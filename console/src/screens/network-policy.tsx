// The network policy (GET/PUT /api/isp/policy, platform.isp): the usage cycle's first day, what a
// SUSPENDED contract gets (refused, reduced speed, or the notice page) and the trust unblock's
// grace. PUT replaces every field: the form always sends them all.
import { useMemo, useState } from "preact/hooks";
import { call, can, type NetworkPolicy } from "../api";
import { fmtDate, t } from "../i18n";
import { ErrorNote, Form, Notice, PageHeader, Section, useLoad, type FieldDef, type Values } from "../ui";

const MODES = ["reject", "reduce", "redirect"] as const;

const FIELDS: FieldDef[] = [
  { name: "usage_cycle_day", label: "f.usage_cycle_day", type: "number", step: "1", required: true, hint: "hint.usage_cycle_day" },
  { name: "suspended_mode", label: "f.suspended_mode", type: "select", required: true, options: MODES.map((m) => [m, `enum.${m}`]) },
  { name: "suspended_max_download", label: "f.suspended_max_download", hint: "hint.speed" },
  { name: "suspended_max_upload", label: "f.suspended_max_upload", hint: "hint.speed" },
  { name: "suspended_pool_ipv4", label: "f.suspended_pool_ipv4", hint: "hint.suspended_pool_ipv4" },
  { name: "trust_unblock_days", label: "f.trust_unblock_days", type: "number", step: "1", required: true, hint: "hint.trust_unblock_days" },
  { name: "trust_unblock_every_days", label: "f.trust_unblock_every_days", type: "number", step: "1", required: true, hint: "hint.trust_unblock_every_days" },
];

/** A whole number as typed, or null (the server then names the field). */
const whole = (v: unknown) => (v === "" || v === null || v === undefined ? null : Number(v));
const textOrNull = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : null);

export function NetworkPolicyScreen() {
  const [n, setN] = useState(0);
  const policy = useLoad(() => call<NetworkPolicy>("GET", "/api/isp/policy"), [n]);
  const [saved, setSaved] = useState(false);
  const initial = useMemo<Values>(() => {
    const p = policy.data;
    if (!p) return {};
    return { ...p, suspended_max_download: p.suspended_max_download ?? "", suspended_max_upload: p.suspended_max_upload ?? "", suspended_pool_ipv4: p.suspended_pool_ipv4 ?? "" };
  }, [policy.data]);
  const p = policy.data;
  return (
    <>
      <PageHeader title={t("policy.title")} />
      <p>{t("policy.intro")}</p>
      <ErrorNote problem={policy.error} />
      {saved && <Notice kind="success">{t("policy.saved")}</Notice>}
      {p && (
        <>
          <Section title={t("policy.suspension")}>
            <dl class="facts">
              {MODES.map((m) => (
                <div key={m}>
                  <dt>{t(`enum.${m}`)}</dt>
                  <dd>{t(`policy.mode.${m}`)}</dd>
                </div>
              ))}
              <div>
                <dt>{t("policy.trust")}</dt>
                <dd>{t("policy.trustHelp")}</dd>
              </div>
            </dl>
          </Section>
          <Section title={t("policy.settings")}>
            <p class="hint">{p.updated_at ? t("policy.savedAt", { date: fmtDate(p.updated_at) }) : t("policy.defaults")}</p>
            {can("isp") ? (
              <Form
                fields={FIELDS}
                initial={initial}
                submitLabel={t("common.save")}
                onSubmit={async (v) => {
                  setSaved(false);
                  await call<NetworkPolicy>("PUT", "/api/isp/policy", {
                    body: {
                      usage_cycle_day: whole(v.usage_cycle_day),
                      suspended_mode: v.suspended_mode,
                      suspended_max_download: textOrNull(v.suspended_max_download),
                      suspended_max_upload: textOrNull(v.suspended_max_upload),
                      suspended_pool_ipv4: textOrNull(v.suspended_pool_ipv4),
                      trust_unblock_days: whole(v.trust_unblock_days),
                      trust_unblock_every_days: whole(v.trust_unblock_every_days),
                    },
                  });
                  setSaved(true);
                  setN((x) => x + 1);
                }}
              />
            ) : null}
          </Section>
        </>
      )}
    </>
  );
}
