// The console's shell: session gate, navigation filtered by the operator's permissions, language
// and theme switches, and the screen the URL names.
import { SearchBox } from "./search-box";
import { render, type ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { effect, signal } from "@preact/signals";
import "./styles.css";
import { can, isSuper, session } from "./api";
import { lang, setLang, t, type Key } from "./i18n";
import { currentPath, location$, match, navigate } from "./router";
import { Account, Login, changeCorp, logout } from "./screens/auth";
import { Dashboard } from "./screens/dashboard";
import { RESOURCES } from "./screens/defs";
import { AttemptList, SessionDetail, SessionList } from "./screens/radius";
import { AuditLog, Backups } from "./screens/ops";
import { ContractCreate, ContractDetail, ContractList, CustomerPage, DoctorScreen, HistoryScreen, JobsScreen, Menus, NetworkPolicyScreen, OnlineBoard, SafeIps, SystemScreen } from "./screens/lazy";
import { ResourceCreate, ResourceDetail, ResourceList } from "./resource";
import { Link, PageHeader } from "./ui";

type Theme = "auto" | "light" | "dark";
const theme = signal<Theme>((localStorage.getItem("corpadmin.theme") as Theme) || "auto");
effect(() => {
  const th = theme.value;
  if (th === "auto") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = th;
  localStorage.setItem("corpadmin.theme", th);
});

interface NavItem {
  to: string;
  label: Key;
  area: string;
  listPath?: string;
  superOnly?: boolean;
  group: Key;
}

const NAV: NavItem[] = [
  { to: "/", label: "nav.dashboard", area: "", group: "nav.group.overview" },
  { to: "/contracts", label: "nav.contracts", area: "contract", group: "nav.group.customers" },
  ...RESOURCES.map((r) => ({ to: `/${r.key}`, label: r.title, area: r.area, listPath: r.api, superOnly: r.superOnly, group: groupOf(r.key) })),
  { to: "/online", label: "nav.online", area: "isp", listPath: "/api/isp/session", group: "nav.group.network" },
  { to: "/sessions", label: "nav.sessions", area: "isp", listPath: "/api/isp/session", group: "nav.group.network" },
  { to: "/radius-attempts", label: "nav.attempts", area: "isp", listPath: "/api/isp/radius/attempts", group: "nav.group.network" },
  { to: "/network-policy", label: "nav.policy", area: "isp", listPath: "/api/isp/policy", group: "nav.group.network" },
  { to: "/safe-ip", label: "nav.safeIp", area: "auth", group: "nav.group.access" },
  { to: "/menus", label: "nav.menus", area: "service", superOnly: true, group: "nav.group.platform" },
  { to: "/audit", label: "nav.audit", area: "corp", listPath: "/api/audit", group: "nav.group.platform" },
  { to: "/backups", label: "nav.backups", area: "", superOnly: true, group: "nav.group.platform" },
  { to: "/system", label: "nav.system", area: "core", group: "nav.group.platform" },
  { to: "/history", label: "nav.history", area: "corp", listPath: "/api/history", group: "nav.group.platform" },
  { to: "/jobs", label: "nav.jobs", area: "", superOnly: true, group: "nav.group.platform" },
  { to: "/doctor", label: "nav.doctor", area: "", superOnly: true, group: "nav.group.platform" },
];

function groupOf(key: string): Key {
  if (["persons", "cities", "products", "classifications", "external-apps"].includes(key)) return "nav.group.customers";
  if (["nas", "layouts", "radius-attributes", "pools", "pops", "manufacturers"].includes(key)) return "nav.group.network";
  if (["webhooks", "qrcodes", "qr-campaigns", "qr-categories", "qr-logos", "metrics"].includes(key)) return "nav.group.integrations";
  if (key === "notes") return "nav.group.overview";
  if (["users", "workgroups"].includes(key)) return "nav.group.access";
  return "nav.group.platform";
}

function allowed(item: Pick<NavItem, "area" | "listPath" | "superOnly">): boolean {
  if (item.superOnly) return isSuper.value;
  return item.area === "" || can(item.area, item.listPath);
}

function Shell({ children }: { children: ComponentChildren }) {
  const creds = session.value!.credentials;
  const corps = Object.entries(creds.user.corps);
  const [corpError, setCorpError] = useState<string | null>(null);
  const path = currentPath();
  const groups = [...new Set(NAV.map((n) => n.group))];
  // On a phone the menu is a drawer; choosing a screen closes it.
  const [drawer, setDrawer] = useState(false);
  useEffect(() => setDrawer(false), [path]);
  return (
    <div class={`shell${drawer ? " drawer-open" : ""}`}>
      <a href="#main" class="skip">
        {t("shell.skip")}
      </a>
      <header class="topbar">
        <button type="button" class="menu-button" aria-expanded={drawer} aria-controls="main-menu" onClick={() => setDrawer(!drawer)}>
          <span aria-hidden="true">☰ </span>
          {t("shell.menuButton")}
        </button>
        <span class="brand">corpadmin</span>
        <SearchBox />
        <div class="topbar-controls">
          <label for="corp-switch">{t("shell.corp")}</label>
          <select
            id="corp-switch"
            value={corps.find(([, c]) => c.id === creds.corp)?.[0] ?? ""}
            onChange={async (e) => setCorpError(await changeCorp(e.currentTarget.value))}
          >
            {!corps.some(([, c]) => c.id === creds.corp) && <option value="">{creds.corp}</option>}
            {corps.map(([auth, c]) => (
              <option key={auth} value={auth}>
                {c.company_name}
              </option>
            ))}
          </select>
          {corpError && (
            <span role="alert" class="error inline">
              {corpError}
            </span>
          )}
          <label for="lang-switch">{t("shell.language")}</label>
          <select id="lang-switch" value={lang.value} onChange={(e) => setLang(e.currentTarget.value as "en" | "pt-BR")}>
            <option value="en">English</option>
            <option value="pt-BR">Português (Brasil)</option>
          </select>
          <label for="theme-switch">{t("shell.theme")}</label>
          <select id="theme-switch" value={theme.value} onChange={(e) => (theme.value = e.currentTarget.value as Theme)}>
            <option value="auto">{t("shell.themeAuto")}</option>
            <option value="light">{t("shell.themeLight")}</option>
            <option value="dark">{t("shell.themeDark")}</option>
          </select>
          <Link to="/account">{creds.user.name}</Link>
          <button type="button" onClick={logout}>
            {t("shell.logout")}
          </button>
        </div>
      </header>
      <nav id="main-menu" class="sidebar" aria-label={t("shell.menu")}>
        {groups.map((g) => {
          const items = NAV.filter((n) => n.group === g && allowed(n));
          if (items.length === 0) return null;
          return (
            <div key={g} class="nav-group">
              <h2>{t(g)}</h2>
              <ul>
                {items.map((n) => {
                  const active = n.to === "/" ? path === "/" : path === n.to || path.startsWith(`${n.to}/`);
                  return (
                    <li key={n.to}>
                      <Link to={n.to} aria-current={active ? "page" : undefined}>
                        {t(n.label)}
                      </Link>
                    </li>
                  );
                })}
              </ul>
            </div>
          );
        })}
      </nav>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

function Forbidden() {
  return (
    <>
      <PageHeader title={t("forbidden.title")} />
      <p role="alert">{t("forbidden.text")}</p>
      <p>
        <Link to="/">{t("nav.dashboard")}</Link>
      </p>
    </>
  );
}

function NotFound() {
  return (
    <>
      <PageHeader title={t("notFound.title")} />
      <p>
        <Link to="/">{t("nav.dashboard")}</Link>
      </p>
    </>
  );
}

/** The screen for the path, or a clear message when the operator may not open it. */
function screen(path: string): ComponentChildren {
  let m: Record<string, string> | null;
  if (path === "/") return <Dashboard />;
  if (path === "/account") return <Account />;
  if (path.startsWith("/contracts")) {
    if (!can("contract")) return <Forbidden />;
    if (path === "/contracts") return <ContractList />;
    if (path === "/contracts/new") return <ContractCreate />;
    if ((m = match("/contracts/:id", path))) return <ContractDetail id={m.id} />;
  }
  if ((m = match("/customers/:id", path))) return can("person") ? <CustomerPage key={m.id} id={m.id} /> : <Forbidden />;
  if (path === "/online") return can("isp", "/api/isp/session") ? <OnlineBoard /> : <Forbidden />;
  if (path === "/safe-ip") return can("auth") ? <SafeIps /> : <Forbidden />;
  if (path === "/system") return can("core") ? <SystemScreen /> : <Forbidden />;
  if (path === "/menus") return isSuper.value ? <Menus /> : <Forbidden />;
  if (path === "/sessions" || path.startsWith("/sessions/")) {
    if (!can("isp", "/api/isp/session")) return <Forbidden />;
    if (path === "/sessions") return <SessionList />;
    if ((m = match("/sessions/:id", path))) return <SessionDetail id={m.id} />;
  }
  if (path === "/audit") return can("corp", "/api/audit") ? <AuditLog /> : <Forbidden />;
  if (path === "/backups") return isSuper.value ? <Backups /> : <Forbidden />;
  if (path === "/history") return can("corp", "/api/history") ? <HistoryScreen /> : <Forbidden />;
  if (path === "/jobs") return isSuper.value ? <JobsScreen /> : <Forbidden />;
  if (path === "/doctor") return isSuper.value ? <DoctorScreen /> : <Forbidden />;
  if (path === "/network-policy") return can("isp", "/api/isp/policy") ? <NetworkPolicyScreen /> : <Forbidden />;
  if (path === "/radius-attempts") return can("isp", "/api/isp/radius/attempts") ? <AttemptList /> : <Forbidden />;
  for (const def of RESOURCES) {
    if (path !== `/${def.key}` && !path.startsWith(`/${def.key}/`)) continue;
    if (!allowed({ area: def.area, listPath: def.api, superOnly: def.superOnly })) return <Forbidden />;
    if (path === `/${def.key}`) return <ResourceList def={def} />;
    if (path === `/${def.key}/new` && def.creatable !== false) return <ResourceCreate def={def} />;
    if ((m = match(`/${def.key}/:id`, path))) return <ResourceDetail key={m.id} def={def} id={m.id} />;
  }
  return <NotFound />;
}

function App() {
  const path = currentPath();
  void location$.value;
  void lang.value;
  useEffect(() => {
    // After a change of screen, focus its heading so screen readers announce it; the login page
    // focuses its first field instead (the one thing to do there).
    const inputs = path === "/login" ? [...document.querySelectorAll<HTMLInputElement>("main input")] : [];
    const first = inputs.find((i) => !i.value) ?? inputs[0] ?? null;
    (first ?? (document.getElementById("page-title") as HTMLElement | null))?.focus({ preventScroll: true });
  }, [path]);
  if (!session.value) {
    if (path !== "/login") {
      // Back to the login, which returns here afterwards.
      const next = `${path}${location.search}`;
      queueMicrotask(() => navigate(`/login${path === "/" ? "" : `?next=${encodeURIComponent(next)}`}`, true));
      return null;
    }
    return <Login />;
  }
  if (path === "/login") {
    queueMicrotask(() => navigate("/", true));
    return null;
  }
  return <Shell>{screen(path)}</Shell>;
}

render(<App />, document.getElementById("app")!);
