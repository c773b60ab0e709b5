// The URL is the state: the path picks the screen, the query holds its filters, page and sort.
import { signal } from "@preact/signals";

export const BASE = "/console";
export const location$ = signal(`${location.pathname}${location.search}`);

export function navigate(to: string, replace = false): void {
  const url = to.startsWith(BASE) ? to : `${BASE}${to}`;
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  location$.value = url;
  if (!replace) window.scrollTo(0, 0);
}

addEventListener("popstate", () => {
  location$.value = `${location.pathname}${location.search}`;
});

// Plain links to console paths change the screen without reloading the page.
document.addEventListener("click", (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.target as Element | null)?.closest?.("a");
  if (!a || a.target || a.hasAttribute("download")) return;
  const href = a.getAttribute("href");
  if (!href || !href.startsWith(`${BASE}`)) return;
  e.preventDefault();
  navigate(href);
});

/** The screen's path without the base, e.g. "/contracts/0192…". */
export function currentPath(): string {
  const path = location$.value.split("?")[0].slice(BASE.length);
  return path === "" ? "/" : path;
}

export function currentQuery(): URLSearchParams {
  const q = location$.value.split("?")[1];
  return new URLSearchParams(q ?? "");
}

/** Changes some query parameters (null removes one) and keeps the others. */
export function setQuery(patch: Record<string, string | null>, replace = false): void {
  const q = currentQuery();
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || v === "") q.delete(k);
    else q.set(k, v);
  }
  const s = q.toString();
  navigate(`${currentPath()}${s ? `?${s}` : ""}`, replace);
}

/** Matches "/contracts/:id" against a path; the parameters, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const a = pattern.split("/");
  const b = path.split("/");
  if (a.length !== b.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    if (a[i].startsWith(":")) params[a[i].slice(1)] = decodeURIComponent(b[i]);
    else if (a[i] !== b[i]) return null;
  }
  return params;
}
