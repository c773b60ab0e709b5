// An external app's API key: its prefix, and a rotation that shows the new key once.
import { useState } from "preact/hooks";
import { call, type Json, type Schema } from "../api";
import { t } from "../i18n";
import { ConfirmButton, SecretOnce, Section } from "../ui";

export function ExternalAppKey({ row }: { row: Schema<"ExternalApp"> }) {
  const [key, setKey] = useState<string | null>(null);
  return (
    <Section title={t("extapp.key")}>
      <p>{t("extapp.prefix", { prefix: row.key_prefix ?? "" })}</p>
      {key && <SecretOnce label={t("f.api_key")} value={key} />}
      <ConfirmButton
        danger
        label={t("extapp.rotate")}
        message={t("extapp.rotateConfirm", { name: row.name })}
        onConfirm={async () => setKey((await call<Json<"externalapp.createKey">>("POST", `/api/externalapp/${row.id}/key`)).api_key)}
      />
    </Section>
  );
}
