import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, pagePath, type SearchHit } from './api.ts';
import type { Language } from './i18n.ts';
import { mayQuery, typeLabel, useApp } from './state.ts';

/** The header of every page: where one is, who one is, language, time travel, search, Logout. */
export function Header({ menuOpen, onMenu }: { menuOpen?: boolean; onMenu?: () => void }) {
  const app = useApp();
  const web = `${app.config.contextPath}/web`;
  return (
    <header class="header">
      {onMenu && (
        <button type="button" class="menu-button" aria-expanded={menuOpen ? 'true' : 'false'} aria-controls="sidebar" onClick={onMenu}>
          {app.t('menu')}
        </button>
      )}
      <a class="brand" href={app.db ? app.link(`${web}/${encodeURIComponent(app.db)}`) : `${web}/admin`}>
        {app.t('appTitle')}{app.db ? <span class="db-name"> · <span class="visually-hidden">{app.t('database')} </span>{app.db}</span> : <span> · {app.t('admin')}</span>}
      </a>
      {app.db && <Search />}
      {app.db && <TimeTravel />}
      {app.db && mayQuery(app) && (
        <a class="console-link" href={app.link(`${web}/${encodeURIComponent(app.db)}/query`)}>{app.t('queryConsole')}</a>
      )}
      {app.db && app.session && (
        <a class="jobs-link" href={app.link(`${web}/${encodeURIComponent(app.db)}/jobs`)}>{app.t('jobsPage')}</a>
      )}
      {app.db && mayQuery(app) && (
        <a class="tenant-link" href={`${web}/${encodeURIComponent(app.db)}/tenant`}>{app.t('tenantPage')}</a>
      )}
      <div class="who">
        {app.session && <span class="person">{app.t('signedInAs', { loginId: app.session.loginId })}</span>}
        {app.session?.tenantLabel && <span class="tenant">{app.t('tenant', { tenant: app.session.tenantLabel })}</span>}
        {app.db && app.session && app.config.signIn !== 'preauth' && <TenantSwitch />}
      </div>
      <LanguageSwitch />
      {app.session && (app.config.signIn !== 'preauth' || app.session.logoutUrl) ? (
        <button type="button" class="logout" onClick={() => app.signOut()}>{app.t('logout')}</button>
      ) : null}
    </header>
  );
}

/** Switches the login tenant of the session (PATCH /web/session). */
function TenantSwitch() {
  const app = useApp();
  const [open, setOpen] = useState(false);
  const [label, setLabel] = useState('');
  const [error, setError] = useState<string | undefined>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      app.setSession(await app.api.switchTenant(app.db!, label.trim()));
      setOpen(false);
      setLabel('');
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  if (!open) return <button type="button" class="link-button" onClick={() => setOpen(true)}>{app.t('tenantSwitch')}</button>;
  return (
    <form class="tenant-switch" onSubmit={submit}>
      <label for="tenant-switch">{app.t('tenantSwitchLabel')}</label>
      <input id="tenant-switch" value={label} required aria-invalid={error ? 'true' : undefined} aria-describedby={error ? 'tenant-switch-error' : undefined}
        onInput={(e) => setLabel((e.currentTarget as HTMLInputElement).value)} />
      <button type="submit">{app.t('tenantSwitchGo')}</button>
      <button type="button" onClick={() => { setOpen(false); setError(undefined); }}>{app.t('cancel')}</button>
      {error && <span class="field-error" id="tenant-switch-error" role="alert">{error}</span>}
    </form>
  );
}

function toLocalInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

function TimeTravel() {
  const app = useApp();
  const location = useLocation();
  const [value, setValue] = useState(app.version ? toLocalInput(app.version) : '');
  useEffect(() => setValue(app.version ? toLocalInput(app.version) : ''), [app.version]);
  const submit = (e: Event) => {
    e.preventDefault();
    const ms = Date.parse(value); // datetime-local without zone: local time
    if (Number.isNaN(ms)) return;
    const url = new URL(location.url, window.location.origin);
    url.searchParams.set('at', new Date(ms).toISOString());
    app.go(url.pathname + url.search);
  };
  return (
    <form class="time-travel-form" onSubmit={submit}>
      <label>
        <span>{app.t('timeTravel')}</span>
        <input type="datetime-local" step="1" value={value} onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)} />
      </label>
      <button type="submit">{app.t('timeTravelGo')}</button>
      {app.at && <a href={location.path}>{app.t('timeTravelNow')}</a>}
    </form>
  );
}

/** The language switch, in the header of every page and of the sign-in page; each language named in itself. */
export function LanguageSwitch() {
  const app = useApp();
  return (
    <label class="language">
      <span class="visually-hidden">{app.t('language')}</span>
      <select value={app.language} onChange={(e) => app.setLanguage((e.currentTarget as HTMLSelectElement).value as Language)}>
        {app.config.languages.map((l) => <option key={l} value={l} lang={l}>{l === 'de' ? 'Deutsch' : 'English'}</option>)}
      </select>
    </label>
  );
}

/**
 * How long the search field waits after a key before it asks: short, since a
 * stale request is aborted and the service answers a search in tens of
 * milliseconds (the target is 150 ms from the third key to the hits).
 */
const SEARCH_PAUSE_MS = 40;

/** The search field: asks as one types (debounced, the stale request aborted), arrows and Enter choose; it searches the current state, also during time travel. */
export function Search() {
  const app = useApp();
  const [q, setQ] = useState('');
  const [hits, setHits] = useState<SearchHit[] | undefined>();
  const [active, setActive] = useState(-1);
  const [open, setOpen] = useState(false);
  const controller = useRef<AbortController | undefined>(undefined);
  useEffect(() => {
    const text = q.trim();
    if (!text) {
      controller.current?.abort();
      setHits(undefined);
      return;
    }
    const timer = setTimeout(() => {
      controller.current?.abort();
      const c = new AbortController();
      controller.current = c;
      app.api.search(app.db!, text.slice(0, 200), c.signal).then(
        (found) => {
          if (c.signal.aborted) return;
          setHits(found);
          setActive(found.length ? 0 : -1);
          setOpen(true);
        },
        (error) => {
          if (c.signal.aborted || (error instanceof DOMException && error.name === 'AbortError')) return;
          if (error instanceof ApiError) setHits([]);
        },
      );
    }, SEARCH_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [q, app.db]);
  const choose = (hit: SearchHit) => {
    setOpen(false);
    setQ('');
    app.go(app.link(pagePath(hit.href)));
  };
  const onKey = (e: KeyboardEvent) => {
    if (!hits?.length) return;
    if (e.key === 'ArrowDown') { e.preventDefault(); setOpen(true); setActive((a) => (a + 1) % hits.length); }
    else if (e.key === 'ArrowUp') { e.preventDefault(); setActive((a) => (a <= 0 ? hits.length - 1 : a - 1)); }
    else if (e.key === 'Enter' && open && active >= 0) { e.preventDefault(); choose(hits[active]); }
    else if (e.key === 'Escape') setOpen(false);
  };
  const expanded = open && hits !== undefined;
  return (
    <div class="search" role="search">
      <label for="search-input" class="visually-hidden">{app.t('search')}</label>
      <input
        id="search-input" type="text" role="combobox" autoComplete="off" placeholder={app.t('searchPlaceholder')}
        aria-expanded={expanded ? 'true' : 'false'} aria-controls="search-results" aria-autocomplete="list"
        aria-activedescendant={expanded && active >= 0 ? `search-hit-${active}` : undefined}
        aria-describedby={app.at ? 'search-now' : undefined}
        value={q} onInput={(e) => setQ((e.currentTarget as HTMLInputElement).value)} onKeyDown={onKey}
        onFocus={() => setOpen(true)} onBlur={() => setTimeout(() => setOpen(false), 200)}
      />
      <ul id="search-results" role="listbox" aria-label={app.t('search')} class={expanded ? 'results open' : 'results'}>
        {expanded && hits!.length === 0 && <li class="no-hits" role="option" aria-disabled="true" aria-selected="false">{app.t('searchNoHits')}</li>}
        {expanded && hits!.map((hit, i) => (
          <li key={hit.id} id={`search-hit-${i}`} role="option" aria-selected={i === active ? 'true' : 'false'} class={i === active ? 'active' : ''}
            onMouseDown={(e) => { e.preventDefault(); choose(hit); }}>
            <span class="hit-type">{typeLabel(app, hit._type)}</span> <span class="hit-label">{hit.label}</span>
            <span class="hit-path">{hit.path.split('/').filter(Boolean).filter((_, n) => n % 2 === 1).map(decodeURIComponent).join(' › ')}</span>
          </li>
        ))}
      </ul>
      {/* The search has no point in time: while the page shows a past state, it says so, always in sight and to the field's screen reader. */}
      {app.at && <p class="hint search-now" id="search-now">{app.t('timeTravelSearch')}</p>}
    </div>
  );
}
