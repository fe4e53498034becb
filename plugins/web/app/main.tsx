/**
 * The user interface in the browser: reads the shell's configuration, the
 * language, the session of the page's scope (a database, or the service-wide
 * administration), then shows the pages. Routing is preact-iso's.
 */
import './style.css';
import { render } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useMemo, useState } from 'preact/hooks';
import { LocationProvider, useLocation } from 'preact-iso';
import { Api, ApiError, type Metamodel, type ServiceConfig, type WebSession } from './api.ts';
import { initialLanguage, keepLanguage, translate, type Language } from './i18n.ts';
import { AppContext, mayQuery, useApp, type AppState } from './state.ts';
import { SignIn } from './signin.tsx';
import { Header } from './header.tsx';
import { contentLists, Tree, TREE_PAGE } from './tree.tsx';
import { ObjectPage, objectPath } from './object.tsx';
import { AdminPage } from './admin.tsx';
import type { QueryConsole as QueryConsoleType } from './console.tsx';
import { JobsPanel } from './jobs.tsx';
import type { TenantPage as TenantPageType } from './tenant.tsx';

const configElement = document.getElementById('service-config');
const config: ServiceConfig = {
  contextPath: '',
  signIn: 'password',
  languages: ['en', 'de'],
  defaultLanguage: 'en',
  ...(configElement ? JSON.parse(configElement.textContent || '{}') : {}),
};
const api = new Api(config, initialLanguage(config.languages, config.defaultLanguage));
const WEB = `${config.contextPath}/web`;

/** The page's scope and route from its path below `{ctx}/web/`. */
function parse(path: string): { scope: 'admin' | 'db'; db?: string; plural?: string; id?: string } {
  const rest = path.startsWith(WEB) ? path.slice(WEB.length) : path;
  const parts = rest.split('/').filter(Boolean).map(decodeURIComponent);
  if (!parts.length || parts[0] === 'admin') return { scope: 'admin' };
  return { scope: 'db', db: parts[0], plural: parts[1], id: parts[2] };
}

function App() {
  const location = useLocation();
  const [language, setLanguageState] = useState<Language>(api.language);
  const route = parse(location.path);
  const scopeKey = route.scope === 'admin' ? '' : route.db!;
  const [session, setSession] = useState<{ scope: string; value?: WebSession; state: 'loading' | 'signedOut' | 'in' | 'error'; error?: string }>({ scope: '\0', state: 'loading' });
  const [meta, setMeta] = useState<Metamodel | undefined>();
  const [metaTick, setMetaTick] = useState(0);
  const [changes, setChanges] = useState(0);
  const at = location.query.at && !Number.isNaN(Date.parse(location.query.at)) ? location.query.at : undefined;
  const version = at ? Date.parse(at) : undefined;

  // Before the page in the new language is painted: the metamodel holds the labels of both languages, so its texts change at once.
  useLayoutEffect(() => {
    document.documentElement.lang = language;
    api.language = language;
    document.title = translate(language, 'appTitle') + (route.db ? ` – ${route.db}` : '');
  }, [language, route.db]);

  useEffect(() => {
    api.onUnauthorized = () => setSession((s) => (s.state === 'in' ? { scope: s.scope, state: 'signedOut' } : s));
  }, []);

  useEffect(() => {
    let live = true;
    setSession({ scope: scopeKey, state: 'loading' });
    setMeta(undefined);
    api.csrfToken = undefined;
    api.session(scopeKey || undefined).then(
      (value) => {
        if (!live) return;
        // What the page will draw is asked for beside the metamodel, not after it.
        if (route.db && version === undefined) prefetchPage(route.db, route.plural, route.id);
        setSession({ scope: scopeKey, value, state: 'in' });
      },
      (error) => {
        if (!live) return;
        if (error instanceof ApiError && error.status === 401) setSession({ scope: scopeKey, state: 'signedOut' });
        else setSession({ scope: scopeKey, state: 'error', error: String(error.message ?? error) });
      },
    );
    return () => { live = false; };
  }, [scopeKey]);

  useEffect(() => {
    if (session.state !== 'in' || !route.db) return;
    let live = true;
    api.metamodel(route.db).then((m) => live && setMeta(m), (error) => live && setSession((s) => ({ ...s, state: 'error', error: String(error.message) })));
    return () => { live = false; };
  }, [session.state, route.db, language, metaTick, location.path]);

  const link = useCallback((path: string) => {
    const url = new URL(path.startsWith('/') ? path : `${WEB}/${path}`, window.location.origin);
    if (at) url.searchParams.set('at', at);
    return url.pathname + url.search;
  }, [at]);

  const state: AppState = useMemo(() => ({
    api,
    config,
    language,
    t: (key, params) => translate(language, key, params),
    setLanguage: (l) => { keepLanguage(l); setLanguageState(l); },
    db: route.db,
    session: session.value,
    meta,
    at,
    version,
    canEdit: !!session.value && session.value.accessLevel !== 'READ_ONLY',
    link,
    go: (path) => location.route(path),
    signOut: async () => {
      let logoutUrl: string | undefined;
      try {
        logoutUrl = (await api.signOut(scopeKey || undefined)).logoutUrl;
      } catch { /* the session may be over already */ }
      if (logoutUrl) window.location.assign(logoutUrl);
      else setSession({ scope: scopeKey, state: 'signedOut' });
    },
    refreshMeta: () => setMetaTick((n) => n + 1),
    setSession: (value) => {
      setSession({ scope: scopeKey, value, state: 'in' });
      setChanges((n) => n + 1);
      setMetaTick((n) => n + 1);
    },
    changes,
    noteChange: () => setChanges((n) => n + 1),
  }), [language, route.db, session, meta, at, version, link, scopeKey, changes]);

  let body;
  if (session.state === 'loading' || session.scope !== scopeKey) body = <main id="main" class="center"><p role="status">{state.t('loading')}</p></main>;
  else if (session.state === 'error') body = <main id="main" class="center"><p role="alert" class="error">{state.t('error', { message: session.error ?? '' })}</p></main>;
  else if (session.state === 'signedOut' && config.signIn === 'preauth') body = <main id="main" class="center"><p role="alert" class="error">{state.t('preauthMissing')}</p></main>;
  else if (session.state === 'signedOut') body = <SignIn db={route.db} onSignedIn={(value) => setSession({ scope: scopeKey, value, state: 'in' })} />;
  else if (route.scope === 'admin') body = <AdminPage />;
  else body = <DatabaseLayout plural={route.plural} id={route.id} />;

  return (
    <AppContext.Provider value={state}>
      <a class="skip-link" href="#main">{state.t('skipToContent')}</a>
      {body}
    </AppContext.Provider>
  );
}

/**
 * Starts the calls a page of the database will make as soon as the session
 * is known: the metamodel, the object the address names, and, from the
 * metamodel this tab last saw (if any), the tree's root lists. The
 * components take these answers when they ask (Api.prefetch); an answer
 * nobody takes is dropped. The object's lists are not among them: the
 * object links only those that hold something (decisions §7.3), and only
 * those are asked for once it is there.
 */
function prefetchPage(db: string, plural?: string, id?: string) {
  // First, so that it is not behind the others for one of the browser's six connections.
  api.metamodel(db).catch(() => undefined);
  if (plural && id) api.prefetch(objectPath(db, plural, id));
  const meta = api.lastMetamodel(db);
  if (!meta) return;
  for (const type of Object.values(meta.types)) {
    if (type.root && !type.abstract && !type.hidden && contentLists(meta, type).length) api.prefetch(`/rest/${encodeURIComponent(db)}/${type.plural}?limit=${TREE_PAGE}`);
  }
}

function DatabaseLayout({ plural, id }: { plural?: string; id?: string }) {
  const app = useApp();
  const [menuOpen, setMenuOpen] = useState(false);
  const location = useLocation();
  useEffect(() => setMenuOpen(false), [location.url]);
  if (!app.meta) return <main id="main" class="center"><p role="status">{app.t('loading')}</p></main>;
  return (
    <div class="layout">
      <Header menuOpen={menuOpen} onMenu={() => setMenuOpen(!menuOpen)} />
      {app.at && (
        <p class="banner time-travel" role="status">
          {app.t('timeTravelBanner', { at: new Date(app.version!).toLocaleString(app.language === 'de' ? 'de-DE' : 'en-GB') })}{' '}
          <a href={location.path}>{app.t('timeTravelNow')}</a>
        </p>
      )}
      {app.db === 'meta' && <p class="banner meta-notice" role="note">{app.t('metaNotice')}</p>}
      {app.session?.accessLevel === 'READ_ONLY' && <p class="banner">{app.t('readOnlyNotice')}</p>}
      <div class="columns">
        <nav id="sidebar" class={`sidebar${menuOpen ? ' open' : ''}`} aria-label={app.t('tree')}>
          <Tree />
        </nav>
        <main id="main" tabIndex={-1}>
          {plural === QUERY_PAGE && !id ? <QueryPage /> : plural === JOBS_PAGE && !id ? <JobsPanel db={app.db!} headingLevel={1} /> : plural === TENANT_PAGE && !id ? <TenantRoute /> : plural && id ? <ObjectPage key={`${plural}/${id}/${app.version ?? ''}`} plural={plural} id={id} /> : plural ? <p class="error">{app.t('notFound')}</p> : (
            <section>
              <h1>{app.db}</h1>
              <p>{app.t('dbWelcome')}</p>
            </section>
          )}
        </main>
      </div>
    </div>
  );
}

/** The segment of the caller's jobs' address, `/web/<db>/jobs` (no type's plural is `jobs`). */
export const JOBS_PAGE = 'jobs';

/** The segment of the query console's address, `/web/<db>/query` (no type's plural is `query`). */
export const QUERY_PAGE = 'query';

/** The segment of the tenant page's address, `/web/<db>/tenant` (no type's plural is `tenant`). */
export const TENANT_PAGE = 'tenant';

/** The tenant page (users, access keys, access rules, profiles, tenants); its code is fetched only when the page opens. It says itself who may not. */
function TenantRoute() {
  const app = useApp();
  const [Page, setPage] = useState<{ c: typeof TenantPageType } | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    import('./tenant.tsx').then((m) => setPage({ c: m.TenantPage }), (e) => setError(String((e as Error).message ?? e)));
  }, []);
  if (error) return <p class="error" role="alert">{app.t('error', { message: error })}</p>;
  if (!Page) return <p role="status">{app.t('loading')}</p>;
  return <Page.c />;
}

/** The query console, for administrators; its code (CodeMirror with it) is fetched only when the page opens. */
function QueryPage() {
  const app = useApp();
  const [Console, setConsole] = useState<{ c: typeof QueryConsoleType } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const allowed = mayQuery(app);
  useEffect(() => {
    if (!allowed) return;
    import('./console.tsx').then((m) => setConsole({ c: m.QueryConsole }), (e) => setError(String((e as Error).message ?? e)));
  }, [allowed]);
  if (!allowed) return <section><h1>{app.t('queryConsole')}</h1><p class="error" role="alert">{app.t('queryNotAllowed')}</p></section>;
  if (error) return <p class="error" role="alert">{app.t('error', { message: error })}</p>;
  if (!Console) return <p role="status">{app.t('loading')}</p>;
  return <Console.c />;
}

const root = document.getElementById('app') ?? document.body;
/** Links the router follows itself: the pages below {ctx}/web/, not the server's addresses there (sign-in, assets, session). */
const SCOPE = new RegExp(`^${WEB.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?!/(?:login|auth|session|assets)(?:[/?#]|$))`);
render(<LocationProvider scope={SCOPE}><App /></LocationProvider>, root);
