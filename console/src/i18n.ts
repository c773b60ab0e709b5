// English and Brazilian Portuguese. Every key has both texts by construction (dict.ts holds
// [en, pt-BR] pairs), so the two languages always have the same keys.
import { signal } from "@preact/signals";
import { DICT } from "./dict";

export type Lang = "en" | "pt-BR";
export type Key = keyof typeof DICT;

function initialLang(): Lang {
  const saved = localStorage.getItem("corpadmin.lang");
  if (saved === "en" || saved === "pt-BR") return saved;
  return navigator.language.toLowerCase().startsWith("pt") ? "pt-BR" : "en";
}

export const lang = signal<Lang>(initialLang());

export function setLang(l: Lang): void {
  lang.value = l;
  localStorage.setItem("corpadmin.lang", l);
  document.documentElement.lang = l;
}
document.documentElement.lang = lang.value;

/** The text of a key, with {name} placeholders filled. */
export function t(key: Key, params?: Record<string, string | number>): string {
  const pair = DICT[key] as readonly [string, string] | undefined;
  let text = pair ? pair[lang.value === "en" ? 0 : 1] : key;
  if (params) for (const [k, v] of Object.entries(params)) text = text.replaceAll(`{${k}}`, String(v));
  return text;
}

/** A key built at run time (a field name, a status value): its text, or the value itself. */
export function tx(key: string, fallback?: string): string {
  return key in DICT ? t(key as Key) : (fallback ?? key);
}

export function fmtDate(value: string | null | undefined): string {
  if (!value) return "—";
  // A date alone is a calendar day, not an instant: never shift it by the browser's offset.
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const d = day ? new Date(Number(day[1]), Number(day[2]) - 1, Number(day[3])) : new Date(value);
  if (Number.isNaN(d.getTime())) return value;
  return d.toLocaleString(lang.value, { dateStyle: "short", timeStyle: value.length > 10 ? "short" : undefined });
}

export function fmtNumber(n: number | null | undefined, digits = 2): string {
  if (n === null || n === undefined) return "—";
  return n.toLocaleString(lang.value, { maximumFractionDigits: digits });
}

/** Money in the chosen language's way: R$ 1.234,56 in pt-BR, R$1,234.56 in English. */
export function fmtMoney(n: number | null | undefined, currency = "BRL"): string {
  if (n === null || n === undefined) return "—";
  return new Intl.NumberFormat(lang.value, { style: "currency", currency }).format(n);
}

/** An amount as an input shows it: "1.234,56" in pt-BR, "1,234.56" in English. */
export function amountText(n: number | null | undefined): string {
  if (n === null || n === undefined) return "";
  return n.toLocaleString(lang.value, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

/**
 * An amount typed either way ("1.234,56", "1234,56", "1,234.56", "1234.56"): the last "," or "."
 * followed by one or two digits is the decimal mark, the others group thousands. A text that is
 * no number goes to the server as it is, which names the field.
 */
export function parseAmount(text: string): number | string {
  const s = text.trim().replace(/^R\$\s*/, "").replace(/\s/g, "");
  const m = /^(-?[\d.,]*?)(?:[.,](\d{1,2}))?$/.exec(s);
  if (!m || !/\d/.test(s)) return text;
  const whole = m[1].replace(/[.,]/g, "");
  const n = Number(`${whole || "0"}.${m[2] ?? "0"}`);
  return Number.isFinite(n) && /^-?\d*$/.test(whole) ? n : text;
}
