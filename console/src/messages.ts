// The server's messages in the operator's language. The server writes English (its problem
// documents' `detail` and `errors[].message`, Elysia's validation texts among them); the console
// reads the problem `type`, the status and a catalogue of the messages it knows, and in Portuguese
// never shows one it does not know: an unknown message becomes the general sentence for its status.
import type { FieldError, Problem } from "./api";
import { fmtDate, lang, t, tx, type Key } from "./i18n";

type Entry = [RegExp, Key];

/** 409 answers: the server's sentence → its text (a placeholder per capture group: {a}, {b}). */
const CONFLICTS: Entry[] = [
  [/^The (city|product|person|manufacturer|logo|layout|category|campaign|POP|NAS|RADIUS attribute) is (used by|a party of|attached to) /, "conflict.inUse"],
  [/^The record is still referenced/, "conflict.inUse"],
  [/^The webhook is inactive/, "conflict.webhookInactive"],
  [/^A test delivery is not resent/, "conflict.testDelivery"],
  [/^The delivery is pending/, "conflict.deliveryPending"],
  [/^The event of this delivery is no longer kept/, "conflict.eventGone"],
  [/^The session is not online/, "conflict.sessionOffline"],
  [/^The session's NAS no longer exists/, "conflict.nasGone"],
  [/^The contract is cancelled/, "conflict.contractCancelled"],
  [/^The username is taken/, "conflict.usernameTaken"],
  [/^The contract number is used/, "conflict.numberTaken"],
  [/already exists|is taken|exists already|^A server named .* exists|^Another server uses/, "conflict.duplicate"],
  [/^You cannot (inactivate|delete) yourself/, "conflict.yourself"],
  [/^The built-in /, "conflict.builtIn"],
  [/^A built-in service/, "conflict.builtIn"],
  [/^Two-factor authentication is already enabled/, "conflict.twoFactorOn"],
  [/^Two-factor authentication is not enabled/, "conflict.twoFactorOff"],
  [/^No pending secret/, "conflict.noPendingSecret"],
  [/^A backup is running/, "conflict.backupRunning"],
  [/^Job \S+ is running/, "conflict.jobRunning"],
  [/^Job \S+ runs on the node holding its lease/, "conflict.jobElsewhere"],
  [/not enabled for the (workgroup's )?corporation/, "conflict.serviceOff"],
  [/^The user is (not )?a member of/, "conflict.membership"],
  [/^The identity is already linked|^That account is linked/, "conflict.linked"],
  [/^The server holds corporations/, "conflict.serverInUse"],
  [/cannot change/, "conflict.immutable"],
  [/^The contract is not suspended: trust unblock/, "conflict.notSuspended"],
  [/^Trust unblock is off in the network policy/, "conflict.trustOff"],
  [/^The contract's trust unblock was already used on (\d{4}-\d\d-\d\d); it can be given again from (\d{4}-\d\d-\d\d)/, "conflict.trustUsed"],
];

/** Field messages (Elysia's and the services'): the message → its text. */
const FIELDS: Entry[] = [
  [/length greater or equal to 1|Required property|is required|match 'uuid' format/, "form.required"],
  [/^Expected (number|integer)|a number is out of range/, "form.number"],
  [/match 'email' format/, "form.email"],
  [/match 'date' format|ISO 8601/, "form.date"],
  [/match 'uri' format|http or https URL/, "form.url"],
  [/^Expected union value|^Expected kind|^Expected one of|^Expected value of/, "form.choice"],
  [/^Expected boolean/, "form.boolean"],
  [/^Expected string length less|exceeds|too long/, "form.tooLong"],
  [/^Expected (string|object|array)/, "form.invalid"],
  [/^unknown /, "form.unknown"],
  [/not an IPv4 or IPv6 address or CIDR/, "form.cidr"],
  [/not an IPv4 or IPv6 address/, "form.ip"],
  [/must not be before|must not be after/, "form.order"],
  [/is not a PNG or JPEG image|is not base64|is empty/, "form.image"],
  [/IANA time zone/, "form.timezone"],
  [/^Expected .*(greater|less) (or equal )?than|must be from/, "form.range"],
];

function lookup(entries: Entry[], text: string): Key | null {
  for (const [re, key] of entries) if (re.test(text)) return key;
  return null;
}

/** A 409's sentence with its captured values ({a}, {b}; dates in the operator's format), or null. */
function conflictOf(detail: string): string | null {
  for (const [re, key] of CONFLICTS) {
    const m = re.exec(detail);
    if (!m) continue;
    const params: Record<string, string> = {};
    m.slice(1).forEach((v, i) => (params[String.fromCharCode(97 + i)] = /^\d{4}-\d\d-\d\d$/.test(v) ? fmtDate(v) : v));
    return t(key, params);
  }
  return null;
}

/** A field's error in the operator's language. */
export function fieldMessage(message: string): string {
  const key = lookup(FIELDS, message);
  if (key) return t(key);
  return lang.value === "en" ? message : t("form.invalid");
}

/** A field error that no field of the form shows: the field's name and the message. */
export function unplacedMessage(e: FieldError): string {
  const name = e.path.split(".").pop() ?? e.path;
  return `${tx(`f.${name}`, e.path)}: ${fieldMessage(e.message)}`;
}

/** A problem as one sentence for the operator. */
export function problemText(p: Problem | null | undefined): string {
  if (!p) return "";
  if (p.status === 0) return t("error.network");
  if (p.status === 403) return t("error.forbidden");
  if (p.status === 404) return t("error.notFound");
  if (p.status === 409) {
    const found = p.detail ? conflictOf(p.detail) : null;
    if (found) return found;
    return lang.value === "en" && p.detail ? `${t("error.conflict")} ${p.detail}` : t("error.conflict");
  }
  if (p.status === 429) return t("error.rateLimited");
  if (p.status === 503) return t("error.unavailable");
  if (p.status >= 500) return t("error.server");
  if (p.status === 400 && p.errors?.length) return p.errors.map(unplacedMessage).join("; ");
  if (p.status === 401) return t("error.unauthorized");
  return lang.value === "en" ? p.detail || p.title || t("error.generic") : t("error.generic");
}

/** A webhook delivery's failure (the dispatcher's English sentence) in the operator's language. */
export function deliveryErrorText(error: string | null | undefined): string {
  if (!error) return "—";
  if (lang.value === "en") return error;
  let m: RegExpExecArray | null;
  if ((m = /^HTTP (\d+)(: redirects)?/.exec(error))) return m[2] ? t("delivery.redirect", { status: m[1] }) : `HTTP ${m[1]}`;
  if ((m = /^no answer within ([\d.]+) s/.exec(error))) return t("delivery.timeout", { s: m[1] });
  if (/^refused by the egress policy/.test(error)) return t("delivery.egress");
  const code = /\b(E[A-Z]{4,})\b/.exec(error)?.[1];
  return code ? `${t("delivery.failed")} (${code})` : t("delivery.failed");
}
