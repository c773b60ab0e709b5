// Safe IP ranges of the working corporation: once one exists, tokens work only from the ranges.
import { useMemo, useState } from "preact/hooks";
import { asText, call, isSuper, session, type Json, type Problem, type Schema } from "../api";
import { t } from "../i18n";
import { ConfirmButton, ErrorNote, Form, Notice, PageHeader, Section, useLoad, type FieldDef } from "../ui";

const FIELDS: FieldDef[] = [
  { name: "range", label: "f.range", required: true, hint: "hint.range" },
  { name: "description", label: "f.description" },
];

function ipv4(text: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text.replace(/^::ffff:/, ""));
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.some((p) => p > 255) ? null : parts.reduce((n, p) => n * 256 + p, 0);
}

/** Whether an IPv4 address is inside an IPv4 range (a bare address is a /32); null when either is not IPv4. */
export function inRange(ip: string, range: string): boolean | null {
  const [base, bits = "32"] = range.trim().split("/");
  const a = ipv4(ip);
  const b = ipv4(base);
  const n = Number(bits);
  if (a === null || b === null || !Number.isInteger(n) || n < 0 || n > 32) return null;
  const size = 2 ** (32 - n);
  return Math.floor(a / size) === Math.floor(b / size);
}

export function SafeIps() {
  const creds = session.value!.credentials;
  // The address this session comes from, as the server sees it: a range that leaves it out locks
  // the operator out (super-admins excepted).
  const mine = useLoad(() => call<Json<"user.listSessions">>("GET", `/api/user/${creds.user.id}/sessions`), [creds.user.id]);
  const myIp = mine.data?.items.find((x) => x.current)?.ip ?? null;
  const [warned, setWarned] = useState<string | null>(null);
  const domain = Object.entries(creds.user.corps).find(([, c]) => c.id === creds.corp)?.[0];
  const list = useLoad(() => (domain ? call<Schema<"SafeIpRangePage">>("GET", `/api/auth/safe-ip/${domain}`, { query: { limit: 500 } }) : Promise.reject({ status: 404 })), [domain]);
  const initial = useMemo(() => ({ range: "", description: "" }), [list.data]);
  return (
    <>
      <PageHeader title={t("nav.safeIp")} />
      <Notice kind="warning">{t("safeip.warning")}</Notice>
      <ErrorNote problem={list.error} />
      <Section title={t("safeip.ranges")}>
        <ul class="chips">
          {(list.data?.items ?? []).map((r) => (
            <li key={r.id}>
              <code>{r.range}</code> {r.description ?? ""}{" "}
              <ConfirmButton
                danger
                label={t("common.remove")}
                message={t("safeip.removeConfirm", { range: r.range })}
                onConfirm={async () => {
                  await call("DELETE", `/api/auth/safe-ip/${domain}/${r.id}`);
                  list.reload();
                }}
              />
            </li>
          ))}
          {list.data?.items.length === 0 && <li class="empty">{t("safeip.none")}</li>}
        </ul>
        <Form
          fields={FIELDS}
          initial={initial}
          submitLabel={t("common.add")}
          onSubmit={async (v) => {
            const range = asText(v.range);
            const ranges = [...(list.data?.items ?? []).map((r) => r.range), range];
            const outside = myIp !== null && !isSuper.value && ranges.every((r) => inRange(myIp, r) === false);
            if (outside && warned !== range) {
              setWarned(range);
              throw { status: 400, errors: [{ path: "range", message: t("safeip.lockout", { ip: myIp }) }] } satisfies Problem;
            }
            await call("POST", `/api/auth/safe-ip/${domain}`, { body: { range, description: asText(v.description) || null } });
            list.reload();
          }}
        />
      </Section>
    </>
  );
}
