import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, type WebSession } from './api.ts';
import { LanguageSwitch } from './header.tsx';
import { useApp } from './state.ts';

/** The sign-in page of a scope: login ID, password and tenant, or the single sign-on button. */
export function SignIn({ db, onSignedIn }: { db?: string; onSignedIn(session: WebSession): void }) {
  const app = useApp();
  const location = useLocation();
  const [loginId, setLoginId] = useState('');
  const [password, setPassword] = useState('');
  const [tenant, setTenant] = useState('');
  const [error, setError] = useState<string | undefined>(location.query.signInError ? signInErrorText(app.t, location.query.signInError) : undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await app.api.signIn(db, loginId, password, tenant.trim()));
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setError(app.t('signInRefused'));
      else if (err instanceof ApiError && err.status === 403) setError(app.t('signInForbidden'));
      else if (err instanceof ApiError && err.status === 429) setError(app.t('signInThrottled', { seconds: err.response?.headers.get('retry-after') ?? '60' }));
      else setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const ctx = app.config.contextPath;
  // Back to this page after the provider's sign-in: its path below {ctx}/web/, without the error of a previous try.
  const back = new URL(location.url, window.location.origin);
  back.searchParams.delete('signInError');
  const oidcHref = `${ctx}/web/login?${new URLSearchParams({ ...(db ? { database: db } : {}), return: back.pathname + back.search }).toString()}`;
  return (
    <div class="signin-page">
      <header class="header">
        <span class="brand">{app.t('appTitle')}</span>
        <LanguageSwitch />
      </header>
      <main id="main" class="signin">
        <h1>{app.t('signInTitle')}</h1>
        <p>{db ? app.t('signInDatabase', { db }) : app.t('signInAdmin')}</p>
        {error && <p class="error" role="alert">{error}</p>}
        {app.config.signIn === 'oidc' ? (
          <p><a class="button" href={oidcHref}>{app.t('signInOidc')}</a></p>
        ) : (
          <form onSubmit={submit} class="form">
            <div class="field">
              <label for="signin-login">{app.t('loginId')}</label>
              <input id="signin-login" name="username" autoComplete="username" required value={loginId} onInput={(e) => setLoginId((e.currentTarget as HTMLInputElement).value)} />
            </div>
            <div class="field">
              <label for="signin-password">{app.t('password')}</label>
              <input id="signin-password" name="password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)} />
            </div>
            <div class="field">
              <label for="signin-tenant">{app.t('tenantOptional')}</label>
              <input id="signin-tenant" name="tenant" value={tenant} onInput={(e) => setTenant((e.currentTarget as HTMLInputElement).value)} />
            </div>
            <button type="submit" class="primary" disabled={busy}>{app.t('signIn')}</button>
          </form>
        )}
      </main>
    </div>
  );
}

/** The text of an error code the OpenID Connect sign-in sent back (`?signInError=`). */
function signInErrorText(t: (key: string, params?: Record<string, string>) => string, code: string): string {
  if (code === 'CREDENTIALS_REFUSED' || code === 'UNAUTHENTICATED') return t('signInRefused');
  if (code === 'FORBIDDEN' || code === 'TENANT_FORBIDDEN') return t('signInForbidden');
  if (code === 'UNAVAILABLE') return t('signInUnavailable');
  return t('signInError', { code: code.slice(0, 60) });
}
