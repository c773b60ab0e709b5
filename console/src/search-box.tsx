// The top bar's search (GET /api/search): a customer by any words of the name, a CPF/CNPJ with or
// without punctuation, a PPPoE user, an IP or a MAC — results as one types, keyboard first: `/`
// focuses it, arrows move, Enter opens, Escape closes. An ARIA combobox with its listbox.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, problemOf, type Problem } from "./api";
import type { operations } from "./api.gen";
import { t, tx } from "./i18n";
import { problemText } from "./messages";
import { navigate } from "./router";

type Hit = operations["search.list"]["responses"][200]["content"]["application/json"]["items"][number];

/** Where a hit opens: a person's customer page, a contract's screen, the record's own screen. */
function hitPath(h: Hit): string | null {
  switch (h.kind) {
    case "person":
      return `/customers/${h.id}`;
    case "contract":
      return `/contracts/${h.id}`;
    case "session":
      return `/sessions/${h.id}`;
    case "city":
      return `/cities/${h.id}`;
    case "product":
      return `/products/${h.id}`;
    case "qrcode":
      return `/qrcodes/${h.id}`;
    case "nas":
      return `/nas/${h.id}`;
  }
  return null;
}

/** Typing pauses this long before a search goes out; the previous one is cancelled. */
const DEBOUNCE_MS = 200;

export function SearchBox() {
  const input = useRef<HTMLInputElement>(null);
  const [q, setQ] = useState("");
  const [hits, setHits] = useState<Hit[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [active, setActive] = useState(-1);
  const [open, setOpen] = useState(false);
  /** The close after a blur waits for a click on a result; focusing again cancels it. */
  const closing = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  // `/` anywhere but in a field focuses the box, as on the sites operators know.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      const typing = target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
      if (e.key === "/" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
        e.preventDefault();
        input.current?.focus();
        input.current?.select();
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  useEffect(() => {
    const text = q.trim();
    if (text.length < 2) {
      setHits(null);
      setError(null);
      return;
    }
    const abort = new AbortController();
    const timer = setTimeout(async () => {
      try {
        const { data, error: problem, response } = await api.GET("/api/search", { params: { query: { q: text.slice(0, 100), limit: 12 } }, signal: abort.signal });
        if (!data) throw problemOf(problem, response.status);
        setHits(data.items);
        setError(null);
        setActive(data.items.length ? 0 : -1);
      } catch (e) {
        if (abort.signal.aborted) return;
        setHits(null);
        // Through the message catalogue, so that pt-BR shows no server English.
        setError(problemText(e as Problem));
      }
    }, DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [q]);

  const go = (h: Hit) => {
    setOpen(false);
    setQ("");
    input.current?.blur();
    const to = hitPath(h);
    if (to) navigate(to);
  };
  const shown = open && q.trim().length >= 2 && (hits !== null || error !== null);
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      setOpen(false);
      return;
    }
    if (!hits?.length) return;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      setOpen(true);
      setActive((i) => (e.key === "ArrowDown" ? (i + 1) % hits.length : (i - 1 + hits.length) % hits.length));
    } else if (e.key === "Enter" && active >= 0 && hits[active]) {
      e.preventDefault();
      go(hits[active]);
    }
  };
  return (
    <div class="search-box" role="search">
      <label for="top-search" class="visually-hidden">
        {t("search.label")}
      </label>
      <input
        ref={input}
        id="top-search"
        type="search"
        role="combobox"
        list={undefined}
        autocomplete="off"
        spellcheck={false}
        aria-expanded={shown}
        aria-controls="top-search-results"
        aria-autocomplete="list"
        aria-activedescendant={shown && active >= 0 ? `top-search-hit-${active}` : undefined}
        placeholder={t("search.placeholder")}
        value={q}
        maxLength={100}
        onInput={(e) => {
          setQ(e.currentTarget.value);
          setOpen(true);
        }}
        onFocus={() => {
          clearTimeout(closing.current);
          setOpen(true);
        }}
        // A click on a result lands before the box closes.
        onBlur={() => (closing.current = setTimeout(() => setOpen(false), 150))}
        onKeyDown={onKeyDown}
      />
      {shown && (
        <ul id="top-search-results" role="listbox" aria-label={t("search.results")} class="search-results">
          {error && (
            <li role="option" aria-disabled="true" aria-selected={false} class="error">
              {error}
            </li>
          )}
          {hits?.length === 0 && (
            <li role="option" aria-disabled="true" aria-selected={false} class="empty">
              {t("search.none")}
            </li>
          )}
          {hits?.map((h, i) => (
            <li
              key={`${h.kind}:${h.id}`}
              id={`top-search-hit-${i}`}
              role="option"
              aria-selected={i === active}
              class={i === active ? "active" : undefined}
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => go(h)}
            >
              <span class="search-kind">{tx(`r.${h.kind}`, h.kind)}</span>
              <span class="search-title">{h.title}</span>
              {h.subtitle && <span class="search-subtitle">{h.subtitle}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
