// Codes the server sends (audit actions, event groups, built-in service identifiers, permission
// keys) as words in the operator's language; an unknown code is shown as it is.
import { t, tx } from "./i18n";

/** `workgroup.member_add` → "Workgroup · add member". */
export function actionText(action: string): string {
  const [object, verb] = action.split(".", 2);
  if (!verb) return tx(`audit.${action}`, action);
  return `${tx(`object.${object}`, object)} · ${tx(`verb.${verb}`, verb)}`;
}

/** `CONTRACT_AFTER_UPDATE` → "Contract · updated"; `WEBHOOK_TEST` → "Webhook test". */
export function eventText(type: string): string {
  const m = /^([A-Z]+)_AFTER_(INSERT|UPDATE|DELETE)$/.exec(type);
  if (!m) return tx(`event.${type}`, type);
  return `${tx(`object.${m[1].toLowerCase()}`, m[1])} · ${t(`event.${m[2]}` as "event.INSERT")}`;
}

/** A built-in service by its identifier (`platform.contract`), else its stored name. */
export function serviceText(identifier: string | null | undefined, name: string): string {
  return identifier ? tx(`service.${identifier}`, name) : name;
}

/** A permission key: `platform.isp` → the service's name; other keys as they are. */
export function permissionText(key: string): string {
  return key === "*" ? t("user.everything") : tx(`service.${key}`, key);
}
