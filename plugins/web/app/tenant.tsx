/**
 * `/web/<db>/tenant`: the tenant page of administrators (issue 21), on the
 * calls that exist: users as objects of the REST interface
 * (`/rest/<db>/users`), their access keys (`…/users/<id>/accessKeys`,
 * `/rest/<db>/accessKeys/<id>`), the tenant's access rules and their
 * explanation (`/rest/<db>/tenants/<label>/accessRules[/explain]`), the
 * profiles (`/api/<db>/profiles/<name>/download|upload`) and, for system
 * administrators, the tenants (`/rest/<db>/tenants`). Every change goes
 * through the pages' fetch wrapper (api.ts), which sends the session's
 * anti-forgery token. This module is loaded only when the page opens; the
 * YAML editor (CodeMirror) is a chunk of its own, loaded when it is opened.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { Api, ApiError, type MetaProperty } from './api.ts';
import { formatTime, labelOf, useApp, type AppState } from './state.ts';
import { Confirm, message, send, violationsOf } from './admin-kit.tsx';
import { Profiles } from './profiles.tsx';
import type { Schemas } from '../../../client/index.ts';

/** Users per page of the list. */
export const USER_PAGE = 20;
const LEVELS = ['READ_ONLY', 'EDITOR', 'ADMINISTRATOR'] as const;
const ACTIONS = ['GRANT', 'CREATE', 'DENY'] as const;
/** Properties of a user that the page shows in their own way or not at all. */
const OWN_FIELDS = new Set(['loginId', 'accessLevel', 'password', 'defaultTenant', 'subjectId', 'isPerson', 'label', 'status']);

type User = Record<string, unknown> & { id: string; _version?: number; loginId: string; accessLevel?: string; defaultTenant?: boolean; givenName?: string; familyName?: string };
type KeyInfo = Schemas['AccessKeyInfo'];
type KeyCreated = Schemas['AccessKeyCreated'];
type Explanation = Schemas['AccessRuleExplanation'];
interface Tenant { id: string; label: string; _version?: number }
interface Rule { action: string; accessLevel?: string; condition: { groups?: string[]; tenantId?: string } | null; organization?: string }
/** A rule as the form edits it: the condition's kind and its text. */
interface RuleRow { key: number; kind: 'any' | 'groups' | 'tenantId'; value: string; action: string; accessLevel: string; organization: string }

function fieldErrors(e: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!(e instanceof ApiError)) return out;
  for (const v of e.payload?.violations ?? []) {
    const field = String(v.path ?? '').replace(/^\//, '').split(/[./]/)[0];
    if (field) out[field] = out[field] ? `${out[field]} ${v.message}` : v.message;
  }
  return out;
}

/** Whether the person administers the database's tenant: administrators and system administrators. */
export function mayAdminister(app: AppState): boolean {
  return !!app.session && (app.session.accessLevel === 'ADMINISTRATOR' || app.session.systemAdmin);
}

export function TenantPage() {
  const app = useApp();
  if (!mayAdminister(app)) {
    return <section><h1>{app.t('tenantPage')}</h1><p class="error" role="alert">{app.t('tenantNotAllowed')}</p></section>;
  }
  return (
    <section class="tenant-page" aria-labelledby="tenant-heading">
      <h1 id="tenant-heading">{app.t('tenantPageOf', { tenant: app.session?.tenantLabel ?? '' })}</h1>
      <nav class="page-sections" aria-label={app.t('tenantSections')}>
        <ul>
          <li><a href="#users-heading">{app.t('users')}</a></li>
          <li><a href="#rules-heading">{app.t('rules')}</a></li>
          <li><a href="#profiles-heading">{app.t('profiles')}</a></li>
          {app.session?.systemAdmin && <li><a href="#tenants-heading">{app.t('tenants')}</a></li>}
        </ul>
      </nav>
      <Users />
      <Rules />
      <Profiles />
      {app.session?.systemAdmin && <Tenants />}
    </section>
  );
}

// ---------------------------------------------------------------- users

function Users() {
  const app = useApp();
  const db = app.db!;
  const [filter, setFilter] = useState({ loginId: '', accessLevel: '' });
  const [applied, setApplied] = useState(filter);
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<{ users: User[]; total?: number; next?: string } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [tick, setTick] = useState(0);
  const [editing, setEditing] = useState<User | 'new' | undefined>();
  const [keysOf, setKeysOf] = useState<User | undefined>();
  const [deleting, setDeleting] = useState<User | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    let live = true;
    const query: Record<string, string | number | undefined> = { limit: USER_PAGE, cursor, loginId: applied.loginId.trim() || undefined, accessLevel: applied.accessLevel || undefined };
    app.api.call<{ total?: number; _embedded: { users: User[] }; _links: { next?: { href: string } } }>('GET', `/rest/${encodeURIComponent(db)}/users`, { query }).then(
      ({ data }) => {
        if (!live) return;
        setError(undefined);
        setPage({ users: data._embedded.users, total: data.total, next: data._links.next ? new URL(data._links.next.href).searchParams.get('cursor') ?? undefined : undefined });
      },
      (e) => live && setError(message(e)),
    );
    return () => { live = false; };
  }, [db, applied, cursor, tick]);

  const search = (e: Event) => {
    e.preventDefault();
    setCursors([undefined]);
    setApplied({ ...filter });
  };
  const systemAdmins = new Set(app.session?.systemAdministrators ?? []);

  const remove = async () => {
    const user = deleting!;
    setDeleting(undefined);
    try {
      await app.api.call('DELETE', `/rest/${encodeURIComponent(db)}/users/${user.id}`);
      setNotice(app.t('userDeleted', { loginId: user.loginId }));
      if (keysOf?.id === user.id) setKeysOf(undefined);
      setTick((n) => n + 1);
    } catch (err) {
      setNotice(message(err));
    }
  };

  return (
    <section class="tenant-section" aria-labelledby="users-heading">
      <h2 id="users-heading">{app.t('users')}</h2>
      <form class="filter" onSubmit={search} role="search" aria-label={app.t('usersFilter')}>
        <div class="field">
          <label for="user-filter-login">{app.t('userFilterLogin')}</label>
          <input id="user-filter-login" value={filter.loginId} onInput={(e) => setFilter({ ...filter, loginId: (e.currentTarget as HTMLInputElement).value })} />
        </div>
        <div class="field">
          <label for="user-filter-level">{app.t('accessLevel')}</label>
          <select id="user-filter-level" value={filter.accessLevel} onChange={(e) => setFilter({ ...filter, accessLevel: (e.currentTarget as HTMLSelectElement).value })}>
            <option value="">{app.t('any')}</option>
            {LEVELS.map((l) => <option key={l} value={l}>{app.t(`level.${l}`)}</option>)}
          </select>
        </div>
        <button type="submit">{app.t('filter')}</button>
      </form>
      <div aria-live="polite">{notice && <p class="ok notice" role="status">{notice}</p>}</div>
      {error && <p class="error" role="alert">{error}</p>}
      {!page && !error && <p role="status">{app.t('loading')}</p>}
      {page && (
        <>
          <p class="hint">{page.total === undefined ? '' : page.total === 1 ? app.t('usersTotalOne') : app.t('usersTotal', { count: page.total })}</p>
          <div class="table-wrap">
            <table class="users">
              <thead><tr>
                <th scope="col">{app.t('loginId')}</th>
                <th scope="col">{app.t('userName')}</th>
                <th scope="col">{app.t('accessLevel')}</th>
                <th scope="col">{app.t('systemAdministrator')}</th>
                <th scope="col"><span class="visually-hidden">{app.t('actions')}</span></th>
              </tr></thead>
              <tbody>
                {page.users.length === 0 && <tr><td colSpan={5}>{app.t('usersNone')}</td></tr>}
                {page.users.map((u) => (
                  <tr key={u.id} data-user={u.loginId}>
                    <th scope="row">{u.loginId}</th>
                    <td>{[u.givenName, u.familyName].filter(Boolean).join(' ')}</td>
                    <td>{u.accessLevel ? app.t(`level.${u.accessLevel}`) : ''}</td>
                    <td>{systemAdmins.has(u.loginId) ? app.t('yes') : app.t('no')}</td>
                    <td class="row-actions">
                      <button type="button" onClick={() => { setEditing(u); setNotice(undefined); }}>{app.t('edit')}<span class="visually-hidden"> {u.loginId}</span></button>
                      <button type="button" onClick={() => setKeysOf(u)}>{app.t('accessKeys')}<span class="visually-hidden"> {u.loginId}</span></button>
                      <button type="button" class="danger" onClick={() => setDeleting(u)}>{app.t('delete')}<span class="visually-hidden"> {u.loginId}</span></button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="actions pager">
            <button type="button" disabled={cursors.length < 2} onClick={() => setCursors(cursors.slice(0, -1))}>{app.t('previousPage')}</button>
            <button type="button" disabled={!page.next} onClick={() => setCursors([...cursors, page.next])}>{app.t('nextPage')}</button>
            <button type="button" class="primary" onClick={() => { setEditing('new'); setNotice(undefined); }}>{app.t('userCreate')}</button>
          </div>
        </>
      )}
      {editing && (
        <UserForm key={editing === 'new' ? 'new' : editing.id} user={editing === 'new' ? undefined : editing} systemAdmin={editing !== 'new' && systemAdmins.has(editing.loginId)}
          onDone={(text) => { setEditing(undefined); if (text) { setNotice(text); setTick((n) => n + 1); } }} />
      )}
      {keysOf && <AccessKeys key={keysOf.id} user={keysOf} onClose={() => setKeysOf(undefined)} />}
      <Confirm open={!!deleting} title={app.t('userDeleteTitle', { loginId: deleting?.loginId ?? '' })} text={app.t('userDeleteConfirm', { loginId: deleting?.loginId ?? '' })}
        action={app.t('delete')} onConfirm={remove} onClose={() => setDeleting(undefined)} />
    </section>
  );
}

/** The fields of a user the metamodel's User type offers, beside those the form shows itself. */
function userFields(app: AppState): MetaProperty[] {
  const type = app.meta?.types.User;
  return (type?.properties ?? []).filter((p) => !OWN_FIELDS.has(p.name) && !p.readOnly && !p.hidden && !p.many && !p.custom
    && ['STRING', 'TEXT', 'INTEGER', 'DECIMAL', 'BOOLEAN'].includes(p.dataType ?? ''));
}

function UserForm({ user, systemAdmin, onDone }: { user?: User; systemAdmin: boolean; onDone(notice?: string): void }) {
  const app = useApp();
  const db = app.db!;
  const fields = userFields(app);
  const [values, setValues] = useState<Record<string, unknown>>(() => {
    const v: Record<string, unknown> = { loginId: user?.loginId ?? '', accessLevel: user?.accessLevel ?? 'READ_ONLY', defaultTenant: user?.defaultTenant ?? false };
    for (const f of fields) v[f.name] = user?.[f.name] ?? (f.dataType === 'BOOLEAN' ? false : '');
    return v;
  });
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<string | undefined>();
  const heading = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => heading.current?.focus(), []);
  const passwords = app.config.signIn === 'password';
  const set = (name: string, value: unknown) => setValues({ ...values, [name]: value });

  const submit = async (e: Event) => {
    e.preventDefault();
    setErrors({});
    setFailure(undefined);
    const body: Record<string, unknown> = { _type: 'User', loginId: String(values.loginId).trim(), accessLevel: values.accessLevel };
    // Only a system administrator may mark a user as signing in to this tenant by default (decisions §7.6).
    if (app.session?.systemAdmin) body.defaultTenant = !!values.defaultTenant;
    for (const f of fields) {
      const value = values[f.name];
      if (f.dataType === 'BOOLEAN') body[f.name] = !!value;
      else if (value === '' || value === undefined) body[f.name] = user ? null : undefined;
      else if (f.dataType === 'INTEGER' || f.dataType === 'DECIMAL') body[f.name] = Number(value);
      else body[f.name] = value;
    }
    if (passwords && password) body.password = password;
    try {
      if (user) {
        await app.api.call('PATCH', `/rest/${encodeURIComponent(db)}/users/${user.id}`, { body, headers: user._version ? { 'If-Match': `W/"${user._version}"` } : undefined });
        onDone(app.t('userSaved', { loginId: String(body.loginId) }));
      } else {
        await app.api.call('POST', `/rest/${encodeURIComponent(db)}/users`, { body });
        onDone(app.t('userCreated', { loginId: String(body.loginId) }));
      }
    } catch (err) {
      const byField = fieldErrors(err);
      setErrors(byField);
      if (!Object.keys(byField).length) setFailure(message(err));
      else setFailure(app.t('formInvalid'));
    }
  };

  const field = (name: string, label: string, input: ComponentChildren, help?: string) => (
    <div class={`field${errors[name] ? ' invalid' : ''}`} key={name}>
      <label for={`user-${name}`}>{label}</label>
      {input}
      {help && <p class="help" id={`user-${name}-help`}>{help}</p>}
      {errors[name] && <p class="field-error" id={`user-${name}-error`}>{errors[name]}</p>}
    </div>
  );
  const described = (name: string, help?: boolean) => [help ? `user-${name}-help` : '', errors[name] ? `user-${name}-error` : ''].filter(Boolean).join(' ') || undefined;

  return (
    <form class="form object-form user-form" onSubmit={submit} noValidate aria-labelledby="user-form-heading">
      <h3 id="user-form-heading" tabIndex={-1} ref={heading}>{user ? app.t('userEdit', { loginId: user.loginId }) : app.t('userCreate')}</h3>
      {user && <p>{app.t('systemAdministrator')}: <strong>{systemAdmin ? app.t('yes') : app.t('no')}</strong> <span class="hint">{app.t('systemAdministratorHint')}</span></p>}
      {field('loginId', app.t('loginId'), (
        <input id="user-loginId" required value={String(values.loginId)} autoComplete="off" aria-invalid={errors.loginId ? 'true' : undefined} aria-describedby={described('loginId')}
          onInput={(e) => set('loginId', (e.currentTarget as HTMLInputElement).value)} />
      ))}
      {field('accessLevel', app.t('accessLevel'), (
        <select id="user-accessLevel" value={String(values.accessLevel)} aria-describedby={described('accessLevel')} onChange={(e) => set('accessLevel', (e.currentTarget as HTMLSelectElement).value)}>
          {LEVELS.map((l) => <option key={l} value={l}>{app.t(`level.${l}`)}</option>)}
        </select>
      ))}
      {fields.map((f) => {
        const label = labelOf(app, f);
        if (f.dataType === 'BOOLEAN') {
          return (
            <div class={`field checkbox${errors[f.name] ? ' invalid' : ''}`} key={f.name}>
              <label><input type="checkbox" id={`user-${f.name}`} checked={!!values[f.name]} onChange={(e) => set(f.name, (e.currentTarget as HTMLInputElement).checked)} /> {label}</label>
              {errors[f.name] && <p class="field-error">{errors[f.name]}</p>}
            </div>
          );
        }
        const numeric = f.dataType === 'INTEGER' || f.dataType === 'DECIMAL';
        const common = {
          id: `user-${f.name}`, value: String(values[f.name] ?? ''), 'aria-invalid': errors[f.name] ? 'true' as const : undefined, 'aria-describedby': described(f.name, !!f.description),
          onInput: (e: Event) => set(f.name, (e.currentTarget as HTMLInputElement).value),
        };
        return field(f.name, label, numeric
          ? <input {...common} type="number" inputMode="numeric" step={f.dataType === 'INTEGER' ? '1' : 'any'} />
          : <input {...common} type="text" />, f.description);
      })}
      {app.session?.systemAdmin && (
        <div class="field checkbox">
          <label><input type="checkbox" id="user-defaultTenant" checked={!!values.defaultTenant} onChange={(e) => set('defaultTenant', (e.currentTarget as HTMLInputElement).checked)} /> {app.t('defaultTenant')}</label>
        </div>
      )}
      {passwords && field('password', user ? app.t('passwordNew') : app.t('password'), (
        <input id="user-password" type="password" autoComplete="new-password" value={password} aria-invalid={errors.password ? 'true' : undefined} aria-describedby={described('password', true)}
          onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)} />
      ), app.t('passwordHelp'))}
      {failure && <p class="error" role="alert">{failure}</p>}
      <div class="actions">
        <button type="submit" class="primary">{user ? app.t('save') : app.t('create')}</button>
        <button type="button" onClick={() => onDone()}>{app.t('cancel')}</button>
      </div>
    </form>
  );
}

// ---------------------------------------------------------------- access keys

function AccessKeys({ user, onClose }: { user: User; onClose(): void }) {
  const app = useApp();
  const db = app.db!;
  const [keys, setKeys] = useState<KeyInfo[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [description, setDescription] = useState('');
  const [expires, setExpires] = useState('');
  const [created, setCreated] = useState<KeyCreated | undefined>();
  const [copied, setCopied] = useState(false);
  const [revoking, setRevoking] = useState<KeyInfo | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [tick, setTick] = useState(0);
  const heading = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => heading.current?.focus(), []);

  useEffect(() => {
    let live = true;
    app.api.client.GET('/rest/{db}/users/{key}/accessKeys', { params: { path: { db, key: user.id } } }).then(
      (r) => { if (live) setKeys(Api.unwrap(r)._embedded.accessKeys); },
      (e) => live && setError(message(e)),
    ).catch((e) => live && setError(message(e)));
    return () => { live = false; };
  }, [user.id, tick]);

  const create = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setNotice(undefined);
    setCopied(false);
    const expiresAt = expires ? Date.parse(`${expires}T23:59:59`) : undefined;
    try {
      setCreated(Api.unwrap(await app.api.client.POST('/rest/{db}/users/{key}/accessKeys', {
        params: { path: { db, key: user.id } }, body: { description: description.trim() || undefined, ...(expiresAt ? { expiresAt } : {}) },
      })));
      setDescription('');
      setExpires('');
      setTick((n) => n + 1);
    } catch (err) {
      setError(violationsOf(err).join(' '));
    }
  };

  const revoke = async () => {
    const key = revoking!;
    setRevoking(undefined);
    try {
      Api.unwrap(await app.api.client.DELETE('/rest/{db}/accessKeys/{accessKey}', { params: { path: { db, accessKey: key.id } } }));
      setNotice(app.t('keyRevoked', { description: key.description ?? key.id }));
      if (created?.id === key.id) setCreated(undefined);
      setTick((n) => n + 1);
    } catch (err) {
      setError(message(err));
    }
  };

  const copy = async () => {
    if (!created) return;
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied(true);
    } catch {
      // No clipboard (an insecure origin, a refused permission): the field is selected for Ctrl+C.
      const field = document.getElementById('created-key') as HTMLInputElement | null;
      field?.select();
      setCopied(false);
      setNotice(app.t('keyCopyManually'));
    }
  };

  return (
    <section class="object-form access-keys" aria-labelledby="keys-heading">
      <h3 id="keys-heading" tabIndex={-1} ref={heading}>{app.t('accessKeysOf', { loginId: user.loginId })}</h3>
      {created && (
        <div class="created-key">
          <p class="warning"><strong>{app.t('keyShownOnce')}</strong></p>
          <label for="created-key">{app.t('keyNew')}</label>
          <div class="copy-row">
            <input id="created-key" readOnly value={created.key} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
            <button type="button" onClick={copy}>{app.t('copy')}</button>
          </div>
          <div aria-live="polite">{copied && <p class="ok" role="status">{app.t('copied')}</p>}</div>
          <button type="button" class="link-button" onClick={() => setCreated(undefined)}>{app.t('keyHide')}</button>
        </div>
      )}
      <div aria-live="polite">{notice && <p class="ok notice" role="status">{notice}</p>}</div>
      {error && <p class="error" role="alert">{error}</p>}
      {!keys && !error && <p role="status">{app.t('loading')}</p>}
      {keys && keys.length === 0 && <p>{app.t('keysNone')}</p>}
      {keys && keys.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead><tr>
              <th scope="col">{app.t('description')}</th>
              <th scope="col">{app.t('keyCreatedAt')}</th>
              <th scope="col">{app.t('keyExpires')}</th>
              <th scope="col">{app.t('keyLastUsed')}</th>
              <th scope="col"><span class="visually-hidden">{app.t('keyRevoke')}</span></th>
            </tr></thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id} data-key={k.id}>
                  <td>{k.description ?? ''}</td>
                  <td>{formatTime(app, k.dateCreated)}{k.createdBy ? ` (${k.createdBy})` : ''}</td>
                  <td>{k.expiresAt ? formatTime(app, k.expiresAt) : app.t('never')}{k.expired ? ` – ${app.t('keyExpired')}` : ''}</td>
                  <td>{k.lastUsed ? formatTime(app, k.lastUsed) : app.t('keyNotUsed')}</td>
                  <td><button type="button" class="danger" onClick={() => setRevoking(k)}>{app.t('keyRevoke')}<span class="visually-hidden"> {k.description ?? k.id}</span></button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form class="inline-form" onSubmit={create} aria-label={app.t('keyCreate')}>
        <div class="field">
          <label for="key-description">{app.t('description')}</label>
          <input id="key-description" value={description} maxLength={1000} onInput={(e) => setDescription((e.currentTarget as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="key-expires">{app.t('keyExpiresOn')}</label>
          <input id="key-expires" type="date" value={expires} aria-describedby="key-expires-help" onInput={(e) => setExpires((e.currentTarget as HTMLInputElement).value)} />
          <p class="help" id="key-expires-help">{app.t('keyExpiresHelp')}</p>
        </div>
        <div class="actions">
          <button type="submit" class="primary">{app.t('keyCreate')}</button>
          <button type="button" onClick={onClose}>{app.t('close')}</button>
        </div>
      </form>
      <Confirm open={!!revoking} title={app.t('keyRevokeTitle')} text={app.t('keyRevokeConfirm', { description: revoking?.description ?? revoking?.id ?? '', loginId: user.loginId })}
        action={app.t('keyRevoke')} onConfirm={revoke} onClose={() => setRevoking(undefined)} />
    </section>
  );
}

// ---------------------------------------------------------------- access rules

let rowKeys = 0;

function toRow(rule: Rule): RuleRow {
  const c = rule.condition;
  return {
    key: ++rowKeys,
    kind: c?.groups ? 'groups' : c?.tenantId ? 'tenantId' : 'any',
    value: c?.groups ? c.groups.join(', ') : c?.tenantId ?? '',
    action: rule.action,
    accessLevel: rule.accessLevel ?? 'READ_ONLY',
    organization: rule.organization ?? '',
  };
}

function toRule(row: RuleRow): Rule {
  const condition = row.kind === 'groups' ? { groups: row.value.split(',').map((g) => g.trim()).filter(Boolean) } : row.kind === 'tenantId' ? { tenantId: row.value.trim() } : null;
  const rule: Rule = { condition, action: row.action };
  if (row.action !== 'DENY') rule.accessLevel = row.accessLevel;
  if (row.action === 'CREATE' && row.organization.trim()) rule.organization = row.organization.trim();
  return rule;
}

function Rules() {
  const app = useApp();
  const db = app.db!;
  // By technical key: a rename of the tenant does not change it.
  const tenant = app.session?.tenant ?? app.session?.tenantLabel ?? '';
  const [rows, setRows] = useState<RuleRow[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [problems, setProblems] = useState<string[]>([]);
  const [notice, setNotice] = useState<string | undefined>();

  useEffect(() => {
    app.api.client.GET('/rest/{db}/tenants/{key}/accessRules', { params: { path: { db, key: tenant } } }).then(
      (r) => setRows((Api.unwrap(r) as unknown as Rule[]).map(toRow)),
      (e) => setError(message(e)),
    ).catch((e) => setError(message(e)));
  }, [db, tenant]);

  const change = (i: number, patch: Partial<RuleRow>) => setRows(rows!.map((r, n) => (n === i ? { ...r, ...patch } : r)));
  const move = (i: number, by: number) => {
    const next = [...rows!];
    const [row] = next.splice(i, 1);
    next.splice(i + by, 0, row);
    setRows(next);
    // The button pressed moves with its row: the focus stays on it, or on its opposite where the row reached an end.
    const edge = i + by === 0 || i + by === next.length - 1;
    requestAnimationFrame(() => document.getElementById(`rule-${row.key}-${(by < 0) !== edge ? 'up' : 'down'}`)?.focus());
  };

  const save = async (e: Event) => {
    e.preventDefault();
    setProblems([]);
    setNotice(undefined);
    try {
      const saved = Api.unwrap(await app.api.client.PUT('/rest/{db}/tenants/{key}/accessRules', {
        params: { path: { db, key: tenant } }, body: rows!.map(toRule) as never,
      })) as unknown as Rule[];
      setRows(saved.map(toRow));
      setNotice(app.t('rulesSaved'));
    } catch (err) {
      setProblems(err instanceof ApiError && err.payload?.violations?.length
        ? err.payload.violations.map((v) => {
          const index = /^\/?(\d+)/.exec(String(v.path ?? ''));
          return index ? `${app.t('ruleNumber', { n: Number(index[1]) + 1 })}: ${v.message}` : v.message;
        })
        : [message(err)]);
    }
  };

  return (
    <section class="tenant-section" aria-labelledby="rules-heading">
      <h2 id="rules-heading">{app.t('rules')}</h2>
      <p class="hint">{app.t('rulesHint')}</p>
      {error && <p class="error" role="alert">{error}</p>}
      {!rows && !error && <p role="status">{app.t('loading')}</p>}
      {rows && (
        <form onSubmit={save} aria-labelledby="rules-heading">
          {rows.length === 0 && <p>{app.t('rulesNone')}</p>}
          <ol class="rules">
            {rows.map((row, i) => {
              const id = `rule-${row.key}`;
              return (
                <li key={row.key} class="rule">
                  <fieldset>
                    <legend>{app.t('ruleNumber', { n: i + 1 })}</legend>
                    <div class="rule-fields">
                      <div class="field">
                        <label for={`${id}-kind`}>{app.t('ruleCondition')}</label>
                        <select id={`${id}-kind`} value={row.kind} onChange={(e) => change(i, { kind: (e.currentTarget as HTMLSelectElement).value as RuleRow['kind'] })}>
                          <option value="any">{app.t('ruleAny')}</option>
                          <option value="groups">{app.t('ruleGroups')}</option>
                          <option value="tenantId">{app.t('ruleTenantId')}</option>
                        </select>
                      </div>
                      {row.kind !== 'any' && (
                        <div class="field">
                          <label for={`${id}-value`}>{row.kind === 'groups' ? app.t('ruleGroupsValue') : app.t('ruleTenantIdValue')}</label>
                          <input id={`${id}-value`} value={row.value} onInput={(e) => change(i, { value: (e.currentTarget as HTMLInputElement).value })} />
                        </div>
                      )}
                      <div class="field">
                        <label for={`${id}-action`}>{app.t('ruleAction')}</label>
                        <select id={`${id}-action`} value={row.action} onChange={(e) => change(i, { action: (e.currentTarget as HTMLSelectElement).value })}>
                          {ACTIONS.map((a) => <option key={a} value={a}>{app.t(`action.${a}`)}</option>)}
                        </select>
                      </div>
                      {row.action !== 'DENY' && (
                        <div class="field">
                          <label for={`${id}-level`}>{app.t('accessLevel')}</label>
                          <select id={`${id}-level`} value={row.accessLevel} onChange={(e) => change(i, { accessLevel: (e.currentTarget as HTMLSelectElement).value })}>
                            {LEVELS.map((l) => <option key={l} value={l}>{app.t(`level.${l}`)}</option>)}
                          </select>
                        </div>
                      )}
                      {row.action === 'CREATE' && (
                        <div class="field">
                          <label for={`${id}-org`}>{app.t('ruleOrganization')}</label>
                          <input id={`${id}-org`} value={row.organization} onInput={(e) => change(i, { organization: (e.currentTarget as HTMLInputElement).value })} />
                        </div>
                      )}
                    </div>
                    <div class="actions">
                      <button type="button" id={`${id}-up`} disabled={i === 0} onClick={() => move(i, -1)}>{app.t('moveUp')}<span class="visually-hidden"> ({app.t('ruleNumber', { n: i + 1 })})</span></button>
                      <button type="button" id={`${id}-down`} disabled={i === rows.length - 1} onClick={() => move(i, 1)}>{app.t('moveDown')}<span class="visually-hidden"> ({app.t('ruleNumber', { n: i + 1 })})</span></button>
                      <button type="button" class="danger" onClick={() => setRows(rows.filter((_, n) => n !== i))}>{app.t('remove')}<span class="visually-hidden"> ({app.t('ruleNumber', { n: i + 1 })})</span></button>
                    </div>
                  </fieldset>
                </li>
              );
            })}
          </ol>
          <div class="actions">
            <button type="button" onClick={() => setRows([...rows, toRow({ condition: { groups: [] }, action: 'GRANT', accessLevel: 'READ_ONLY' })])}>{app.t('ruleAdd')}</button>
            <button type="submit" class="primary">{app.t('rulesSave')}</button>
          </div>
          <div aria-live="polite">{notice && <p class="ok notice" role="status">{notice}</p>}</div>
          {problems.length > 0 && <ul class="error problems" role="alert">{problems.map((p, i) => <li key={i}>{p}</li>)}</ul>}
        </form>
      )}
      <Explain tenant={tenant} />
    </section>
  );
}

function Explain({ tenant }: { tenant: string }) {
  const app = useApp();
  const [loginId, setLoginId] = useState('');
  const [groups, setGroups] = useState('');
  const [answer, setAnswer] = useState<Explanation | undefined>();
  const [error, setError] = useState<string | undefined>();

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setAnswer(undefined);
    const list = groups.split(',').map((g) => g.trim()).filter(Boolean);
    try {
      setAnswer(Api.unwrap(await app.api.client.POST('/rest/{db}/tenants/{key}/accessRules/explain', {
        params: { path: { db: app.db!, key: tenant } }, body: { loginId: loginId.trim(), ...(list.length ? { groups: list } : {}) },
      })));
    } catch (err) {
      setError(violationsOf(err).join(' '));
    }
  };

  const matched = answer?.matched ? Object.entries(answer.matched as Record<string, unknown>).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`).join('; ') : '';
  return (
    <form class="form explain" onSubmit={submit} aria-labelledby="explain-heading">
      <h3 id="explain-heading">{app.t('explain')}</h3>
      <p class="hint">{app.t('explainHint')}</p>
      <div class="field">
        <label for="explain-login">{app.t('loginId')}</label>
        <input id="explain-login" required value={loginId} onInput={(e) => setLoginId((e.currentTarget as HTMLInputElement).value)} />
      </div>
      <div class="field">
        <label for="explain-groups">{app.t('explainGroups')}</label>
        <input id="explain-groups" value={groups} aria-describedby="explain-groups-help" onInput={(e) => setGroups((e.currentTarget as HTMLInputElement).value)} />
        <p class="help" id="explain-groups-help">{app.t('explainGroupsHelp')}</p>
      </div>
      <button type="submit">{app.t('explainGo')}</button>
      <div aria-live="polite">
        {answer && (
          <div class="explanation" role="status">
            <p>{answer.rule !== null && answer.rule !== undefined ? app.t('explainRule', { n: answer.rule + 1 }) : app.t(`explainReason.${answer.reason}`)}</p>
            <p>{answer.action === 'DENY' || (!answer.accessLevel && answer.action !== null) ? app.t('explainDenied') : app.t('explainLevel', { level: answer.accessLevel ? app.t(`level.${answer.accessLevel}`) : '' })}
              {answer.action ? ` (${app.t(`action.${answer.action}`)})` : ''}</p>
            {matched && <p>{app.t('explainMatched', { matched })}</p>}
          </div>
        )}
      </div>
      {error && <p class="error" role="alert">{error}</p>}
    </form>
  );
}

// ---------------------------------------------------------------- tenants

function Tenants() {
  const app = useApp();
  const db = app.db!;
  const [tenants, setTenants] = useState<Tenant[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [label, setLabel] = useState('');
  const [createError, setCreateError] = useState<string | undefined>();
  const [renaming, setRenaming] = useState<{ id: string; label: string; error?: string } | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [tick, setTick] = useState(0);

  useEffect(() => {
    app.api.call<{ _embedded: { tenants: Tenant[] } }>('GET', `/rest/${encodeURIComponent(db)}/tenants`).then(
      ({ data }) => setTenants(data._embedded.tenants),
      (e) => setError(message(e)),
    );
  }, [db, tick]);

  const create = async (e: Event) => {
    e.preventDefault();
    setCreateError(undefined);
    try {
      await app.api.call('POST', `/rest/${encodeURIComponent(db)}/tenants`, { body: { _type: 'Tenant', label: label.trim() } });
      setNotice(app.t('tenantCreated', { label: label.trim() }));
      setLabel('');
      setTick((n) => n + 1);
    } catch (err) {
      setCreateError(violationsOf(err).join(' '));
    }
  };

  const rename = async (e: Event) => {
    e.preventDefault();
    if (!renaming) return;
    const tenant = tenants?.find((t) => t.id === renaming.id);
    try {
      await app.api.call('PATCH', `/rest/${encodeURIComponent(db)}/tenants/${renaming.id}`, { body: { _type: 'Tenant', label: renaming.label.trim() }, headers: tenant?._version ? { 'If-Match': `W/"${tenant._version}"` } : undefined });
      setNotice(app.t('tenantRenamed', { from: tenant?.label ?? '', to: renaming.label.trim() }));
      setRenaming(undefined);
      setTick((n) => n + 1);
      // The login tenant's new label, in the header and the page's heading.
      if (renaming.id === app.session?.tenant) app.setSession(await app.api.session(db));
    } catch (err) {
      setRenaming({ ...renaming, error: violationsOf(err).join(' ') });
    }
  };

  return (
    <section class="tenant-section" aria-labelledby="tenants-heading">
      <h2 id="tenants-heading">{app.t('tenants')}</h2>
      {error && <p class="error" role="alert">{error}</p>}
      <div aria-live="polite">{notice && <p class="ok notice" role="status">{notice}</p>}</div>
      {tenants && (
        <ul class="tenant-list">
          {tenants.map((t) => (
            <li key={t.id}>
              {renaming?.id === t.id ? (
                <form class="inline-form" onSubmit={rename}>
                  <div class={`field${renaming.error ? ' invalid' : ''}`}>
                    <label for="tenant-rename">{app.t('tenantNewLabel', { label: t.label })}</label>
                    <input id="tenant-rename" value={renaming.label} aria-invalid={renaming.error ? 'true' : undefined} aria-describedby={renaming.error ? 'tenant-rename-error' : undefined}
                      onInput={(e) => setRenaming({ ...renaming, label: (e.currentTarget as HTMLInputElement).value })} />
                    {renaming.error && <p class="field-error" id="tenant-rename-error">{renaming.error}</p>}
                  </div>
                  <div class="actions">
                    <button type="submit" class="primary">{app.t('rename')}</button>
                    <button type="button" onClick={() => setRenaming(undefined)}>{app.t('cancel')}</button>
                  </div>
                </form>
              ) : (
                <>
                  <span class="tenant-label">{t.label}</span>{t.id === app.session?.tenant ? <span class="hint"> ({app.t('tenantCurrent')})</span> : null}{' '}
                  <button type="button" onClick={() => setRenaming({ id: t.id, label: t.label })}>{app.t('rename')}<span class="visually-hidden"> {t.label}</span></button>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <form class="inline-form" onSubmit={create} noValidate aria-label={app.t('tenantCreate')}>
        <div class={`field${createError ? ' invalid' : ''}`}>
          <label for="tenant-label">{app.t('tenantLabel')}</label>
          <input id="tenant-label" value={label} aria-invalid={createError ? 'true' : undefined} aria-describedby={createError ? 'tenant-label-error' : undefined}
            onInput={(e) => setLabel((e.currentTarget as HTMLInputElement).value)} />
          {createError && <p class="field-error" id="tenant-label-error">{createError}</p>}
        </div>
        <button type="submit" class="primary">{app.t('tenantCreate')}</button>
      </form>
    </section>
  );
}
