// A user's sessions, two-factor reset and effective permissions.
import { call, type Json, type Schema } from "../api";
import { t } from "../i18n";
import { permissionText } from "../labels";
import { ConfirmButton, ErrorNote, Facts, Section, useLoad } from "../ui";
import { UserSessions } from "./ops";

export function UserExtras({ row, replace }: { row: Schema<"User">; replace: (r: Schema<"User">) => void }) {
  return (
    <>
    <UserSessions row={row} />
    <Section title={t("account.twoFactor")}>
      <p>{row.two_factor_required ? t("user.twoFactorOn") : t("user.twoFactorOff")}</p>
      {row.two_factor_required && (
        <ConfirmButton danger label={t("user.reset2fa")} message={t("user.reset2faConfirm", { name: row.name })} onConfirm={async () => replace(await call<Json<"user.reset2fa">>("POST", `/api/user/${row.id}/2fa/reset`))} />
      )}
    </Section>
    </>
  );
}

/** What the user may do in the working corporation, as the server computes it. */
export function UserPermissions({ row }: { row: Schema<"User"> }) {
  const perms = useLoad(() => call<Json<"user.getPermissions">>("GET", `/api/user/${row.id}/permissions`), [row.id]);
  return (
    <Section title={t("user.permissions")}>
      <ErrorNote problem={perms.error} />
      {perms.data && (
        <Facts
          items={[
            [t("user.adminOf"), perms.data.admin.length ? perms.data.admin.map(permissionText).join(", ") : t("user.nothing")],
            [t("user.allowed"), perms.data.allow.includes("*") ? "*" : perms.data.allow.length ? t("user.actions", { n: perms.data.allow.length }) : t("user.nothing")],
          ]}
        />
      )}
    </Section>
  );
}
