// Webhook test/resend/recover, a user's sessions, the audit log and backups (routes.md "Operator
// additions").
import { useState } from "preact/hooks";
import { api, isSuper, problemOf, type Problem, type Schema } from "../api";
import { fmtDate, t, tx } from "../i18n";
import { actionText, eventText } from "../labels";
import { ConfirmButton, ErrorNote, ListView, Notice, PageHeader, Section, download, useLoad, type Column } from "../ui";
import { bytes } from "./radius";

async function webhookTest(id: string) {
  const { data, error, response } = await api.POST("/api/webhook/{id}/test", { params: { path: { id } } });
  if (!data) throw problemOf(error, response.status);
  return data;
}

async function webhookRecover(id: string, since: string) {
  const { data, error, response } = await api.POST("/api/webhook/{id}/recover", { params: { path: { id } }, body: { since } });
  if (!data) throw problemOf(error, response.status);
  return data;
}

/** Throws the problem of an answer that is not 2xx. */
function ok(r: { error?: unknown; response: Response }): void {
  if (!r.response.ok) throw problemOf(r.error, r.response.status);
}

/** Test event, resend of one delivery, recovery of failed ones since a time. */
export function WebhookReplay({ row, onChange }: { row: Schema<"Webhook">; onChange: () => void }) {
  const [since, setSince] = useState("");
  const [message, setMessage] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const run = async (f: () => Promise<string>) => {
    try {
      setMessage(await f());
      setProblem(null);
      onChange();
    } catch (e) {
      setProblem(e as Problem);
    }
  };
  return (
    <Section title={t("webhook.replay")}>
      {message && <Notice kind="success">{message}</Notice>}
      <ErrorNote problem={problem} />
      <div class="toolbar">
        <button type="button" onClick={() => run(async () => t("webhook.testSent", { status: tx(`enum.${(await webhookTest(row.id)).status}`) }))}>
          {t("webhook.test")}
        </button>
      </div>
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          if (since) run(async () => t("webhook.recovered", { n: (await webhookRecover(row.id, new Date(since).toISOString())).queued }));
        }}
      >
        <label for="recover-since">{t("webhook.recoverSince")}</label>
        <input id="recover-since" type="datetime-local" value={since} onInput={(e) => setSince(e.currentTarget.value)} />
        <button type="submit" disabled={!since}>
          {t("webhook.recover")}
        </button>
      </form>
    </Section>
  );
}

/** Resend, only where the server can: not while pending, not a test event (send a new one), not while the webhook is inactive. */
export function resendColumn(webhookId: string, active: boolean, onDone: () => void): Column<Schema<"Delivery">> {
  return {
    key: "id",
    label: "common.actions",
    sort: false,
    render: (r) =>
      r.status === "pending" || r.type === "WEBHOOK_TEST" || !active ? (
        "—"
      ) : (
        <ConfirmButton
          label={t("webhook.resend")}
          message={t("webhook.resendConfirm", { type: eventText(r.type) })}
          onConfirm={async () => {
            ok(await api.POST("/api/webhook/{id}/deliveries/{deliveryId}/resend", { params: { path: { id: webhookId, deliveryId: r.id } } }));
            onDone();
          }}
        />
      ),
  };
}

export function UserSessions({ row }: { row: { id: string; name: string } }) {
  const list = useLoad(async () => {
    const { data, error, response } = await api.GET("/api/user/{id}/sessions", { params: { path: { id: row.id } } });
    if (!data) throw problemOf(error, response.status);
    return data;
  }, [row.id]);
  return (
    <Section title={t("user.sessions")}>
      <ErrorNote problem={list.error} />
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">{t("f.created_at")}</th>
              <th scope="col">{t("f.last_seen_at")}</th>
              <th scope="col">{t("f.ip")}</th>
              <th scope="col">{t("f.user_agent")}</th>
              <th scope="col">{t("common.actions")}</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.items ?? []).map((s) => (
              <tr key={s.id}>
                <td>{fmtDate(s.created_at)}</td>
                <td>{fmtDate(s.last_seen_at)}</td>
                <td>{s.ip ?? "—"}</td>
                <td>{s.user_agent ?? "—"}</td>
                <td>
                  {s.current ? (
                    t("user.thisSession")
                  ) : (
                    <ConfirmButton
                      danger
                      label={t("user.revoke")}
                      message={t("user.revokeConfirm", { name: row.name })}
                      onConfirm={async () => {
                        ok(await api.DELETE("/api/user/{id}/sessions/{sessionId}", { params: { path: { id: row.id, sessionId: s.id } } }));
                        list.reload();
                      }}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.data?.items.length === 0 && <p class="empty">{t("user.noSessions")}</p>}
      </div>
    </Section>
  );
}

export function AuditLog() {
  return (
    <>
      <PageHeader title={t("nav.audit")} />
      <ListView
        path="/api/audit"
        label={t("nav.audit")}
        filters={[{ name: "outcome", label: "f.outcome", options: ["success", "failure", "requested"].map((s) => [s, `enum.${s}`]) }]}
        columns={[
          { key: "at", label: "f.at" },
          { key: "actor", label: "f.actor" },
          { key: "action", label: "f.action", render: (r) => actionText(r.action) },
          { key: "target", label: "f.target_record" },
          { key: "outcome", label: "f.outcome", render: (r) => <span class={`badge ${r.outcome === "success" ? "ok" : r.outcome === "failure" ? "bad" : "off"}`}>{tx(`enum.${r.outcome}`, r.outcome)}</span> },
          { key: "ip", label: "f.ip" },
        ]}
      />
    </>
  );
}

export function Backups() {
  const list = useLoad(async () => {
    const { data, error, response } = await api.GET("/api/backup");
    if (!data) throw problemOf(error, response.status);
    return data;
  }, []);
  const [problem, setProblem] = useState<Problem | null>(null);
  if (!isSuper.value) return null;
  return (
    <>
      <PageHeader title={t("nav.backups")}>
        <ConfirmButton
          label={t("backup.create")}
          message={t("backup.createConfirm")}
          onConfirm={async () => {
            ok(await api.POST("/api/backup"));
            list.reload();
          }}
        />
      </PageHeader>
      <ErrorNote problem={list.error ?? problem} />
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">{t("f.name")}</th>
              <th scope="col">{t("f.created_at")}</th>
              <th scope="col">{t("f.size")}</th>
              <th scope="col">{t("nav.corporations")}</th>
              <th scope="col">{t("backup.verified")}</th>
              <th scope="col">{t("common.actions")}</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.items ?? []).map((b) => (
              <tr key={b.name}>
                <td>{b.name}</td>
                <td>{fmtDate(b.created_at)}</td>
                <td>{bytes(b.size_bytes)}</td>
                <td>{b.corporations}</td>
                <td>{b.verified ? t("common.yes") : t("common.no")}</td>
                <td class="actions">
                  <button type="button" onClick={() => download(`/api/backup/${b.name}/download`, `${b.name}.tar.gz`).then(() => setProblem(null), (e) => setProblem(e as Problem))}>
                    {t("backup.download")}
                  </button>
                  <ConfirmButton
                    danger
                    label={t("common.delete")}
                    message={t("backup.deleteConfirm", { name: b.name })}
                    onConfirm={async () => {
                      ok(await api.DELETE("/api/backup/{name}", { params: { path: { name: b.name } } }));
                      list.reload();
                    }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.data?.items.length === 0 && <p class="empty">{t("backup.none")}</p>}
      </div>
    </>
  );
}
