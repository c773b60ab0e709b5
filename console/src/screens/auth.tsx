// Login (corporation, password, TOTP code, remember this device), the operator's own account with
// TOTP enrolment (QR code and secret), and the change of working corporation.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, expired, problemOf, session, setSession, type Problem } from "../api";
import { t } from "../i18n";
import { currentQuery, navigate } from "../router";
import { ErrorNote, Notice, PageHeader, Section, problemText } from "../ui";
import { UserSessions } from "./ops";

const LAST_CORP = "corpadmin.corp";

export function Login() {
  const [corp, setCorp] = useState(localStorage.getItem(LAST_CORP) ?? "");
  const [login, setLogin] = useState("");
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const [remember, setRemember] = useState(false);
  const [needCode, setNeedCode] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const codeRef = useRef<HTMLInputElement>(null);
  useEffect(() => {
    document.title = `${t("login.title")} · corpadmin`;
  }, []);
  useEffect(() => {
    if (needCode) codeRef.current?.focus();
  }, [needCode]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const { data, error, response } = await api
      .POST("/api/login", { body: { corp: corp.trim(), login: login.trim(), password, ...(code ? { two_factor_code: code.trim(), remember_device: remember } : {}) } })
      .catch(() => ({ data: undefined, error: { status: 0 } as Problem, response: { status: 0 } as Response }));
    setBusy(false);
    if (data) {
      localStorage.setItem(LAST_CORP, corp.trim());
      expired.value = false;
      setSession(data);
      const next = currentQuery().get("next");
      navigate(next && next.startsWith("/") && !next.startsWith("//") ? next : "/", true);
      return;
    }
    const p = problemOf(error, response.status);
    if (p.type?.endsWith(":two-factor-required")) {
      setNeedCode(true);
      setProblem(null);
      return;
    }
    setProblem(p);
  };

  const message = (p: Problem): string => {
    const slug = p.type?.split(":").pop();
    if (slug === "invalid-credentials") return t("login.invalid");
    if (slug === "two-factor-invalid") return t("login.codeInvalid");
    if (slug === "account-inactive") return t("login.inactive");
    if (slug === "corp-blocked") return t("login.blocked");
    if (slug === "ip-not-allowed") return t("login.ipNotAllowed");
    if (p.status === 400) return t("login.fillAll");
    return problemText(p);
  };

  return (
    <main id="main" class="login">
      <form class="card form" onSubmit={submit} noValidate>
        <h1 id="page-title" tabIndex={-1}>
          {t("login.title")}
        </h1>
        {expired.value && <Notice kind="warning">{t("login.expired")}</Notice>}
        <div class="field">
          <label for="login-corp">{t("login.corp")}</label>
          <input id="login-corp" name="corp" autocomplete="organization" required value={corp} onInput={(e) => setCorp(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="login-user">{t("login.login")}</label>
          <input id="login-user" name="username" autocomplete="username" required value={login} onInput={(e) => setLogin(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="login-password">{t("login.password")}</label>
          <input id="login-password" name="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </div>
        {needCode && (
          <>
            <div class="field">
              <label for="login-code">{t("login.code")}</label>
              <input
                id="login-code"
                ref={codeRef}
                name="one-time-code"
                inputMode="numeric"
                autocomplete="one-time-code"
                pattern="[0-9]{6}"
                maxLength={6}
                value={code}
                aria-describedby="login-code-hint"
                onInput={(e) => setCode(e.currentTarget.value)}
              />
              <small class="hint" id="login-code-hint">
                {t("login.codeHint")}
              </small>
            </div>
            <div class="field check">
              <label for="login-remember">{t("login.remember")}</label>
              <input id="login-remember" type="checkbox" checked={remember} onChange={(e) => setRemember(e.currentTarget.checked)} />
            </div>
          </>
        )}
        {problem && (
          <p class="error" role="alert">
            {message(problem)}
          </p>
        )}
        <div class="form-actions">
          <button type="submit" class="primary" disabled={busy}>
            {t("login.submit")}
          </button>
        </div>
      </form>
    </main>
  );
}

/** The operator's own account: password, two-factor authentication. */
export function Account() {
  const creds = session.value!.credentials;
  const user = creds.user;
  const [enrol, setEnrol] = useState<{ secret: string; otpauth_uri: string; svg: string } | null>(null);
  const [code, setCode] = useState("");
  const [problem, setProblem] = useState<Problem | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [enabled, setEnabled] = useState(user.two_factor_required);
  const [pw, setPw] = useState({ current: "", next: "" });

  const start = async () => {
    setProblem(null);
    const { data, error, response } = await api.POST("/api/user/{id}/2fa/enable", { params: { path: { id: user.id } }, body: {} });
    if (!data || !("secret" in data)) return setProblem(problemOf(error, response.status));
    // The QR code library loads only for an enrolment.
    const { default: QRCode } = await import("qrcode");
    const svg = await QRCode.toString(data.otpauth_uri, { type: "svg", margin: 2, errorCorrectionLevel: "M" });
    setEnrol({ secret: data.secret, otpauth_uri: data.otpauth_uri, svg: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}` });
  };
  const confirm = async (e: Event) => {
    e.preventDefault();
    const { data, error, response } = await api.POST("/api/user/{id}/2fa/enable", { params: { path: { id: user.id } }, body: { code: code.trim() } });
    if (!data) return setProblem(problemOf(error, response.status));
    setEnrol(null);
    setCode("");
    setEnabled(true);
    setProblem(null);
    setDone(t("account.twoFactorOn"));
    const s = session.value!;
    setSession({ ...s, credentials: { ...s.credentials, user: { ...s.credentials.user, two_factor_required: true } } });
  };
  const changePassword = async (e: Event) => {
    e.preventDefault();
    const { error, response } = await api.POST("/api/user/{id}/password", { params: { path: { id: user.id } }, body: { current_password: pw.current, new_password: pw.next } });
    if (!response.ok) return setProblem(problemOf(error, response.status));
    setPw({ current: "", next: "" });
    setProblem(null);
    setDone(t("account.passwordChanged"));
  };

  return (
    <>
      <PageHeader title={t("account.title")} />
      {done && <Notice kind="success">{done}</Notice>}
      <ErrorNote problem={problem?.type?.endsWith("two-factor-invalid") ? { ...problem, status: 400, detail: t("login.codeInvalid") } : problem} />
      <Section title={t("account.twoFactor")}>
        {enabled ? (
          <p>{t("account.twoFactorEnabled")}</p>
        ) : enrol ? (
          <form class="form" onSubmit={confirm}>
            <p>{t("account.scan")}</p>
            <img class="totp-qr" src={enrol.svg} width={200} height={200} alt={t("account.qrAlt")} />
            <p>
              {t("account.secret")} <code class="secret-value">{enrol.secret}</code>
            </p>
            <div class="field">
              <label for="totp-code">{t("login.code")}</label>
              <input id="totp-code" inputMode="numeric" autocomplete="one-time-code" maxLength={6} value={code} onInput={(e) => setCode(e.currentTarget.value)} />
            </div>
            <div class="form-actions">
              <button type="submit" class="primary">
                {t("account.confirmCode")}
              </button>
            </div>
          </form>
        ) : (
          <>
            <p>{t("account.twoFactorOff")}</p>
            <button type="button" class="primary" onClick={start}>
              {t("account.enable")}
            </button>
          </>
        )}
      </Section>
      <UserSessions row={{ id: user.id, name: user.name }} />
      <Section title={t("account.password")}>
        <form class="form" onSubmit={changePassword}>
          <input type="text" name="username" autocomplete="username" value={user.login} hidden readOnly />
          <div class="field">
            <label for="pw-current">{t("account.currentPassword")}</label>
            <input id="pw-current" type="password" autocomplete="current-password" value={pw.current} onInput={(e) => setPw({ ...pw, current: e.currentTarget.value })} />
          </div>
          <div class="field">
            <label for="pw-new">{t("account.newPassword")}</label>
            <input id="pw-new" type="password" autocomplete="new-password" value={pw.next} onInput={(e) => setPw({ ...pw, next: e.currentTarget.value })} />
          </div>
          <div class="form-actions">
            <button type="submit">{t("account.changePassword")}</button>
          </div>
        </form>
      </Section>
    </>
  );
}

/** Switches the working corporation: a new token, the old session revoked. */
export async function changeCorp(corp: string): Promise<string | null> {
  const { data, error, response } = await api.POST("/api/auth/corp", { body: { corp } });
  if (!data) return problemText(problemOf(error, response.status));
  setSession(data);
  navigate("/", true);
  return null;
}

export async function logout(): Promise<void> {
  await api.DELETE("/api/logout").catch(() => {});
  setSession(null);
  expired.value = false;
  navigate("/login", true);
}
