/** `/web/admin`: the service's databases for system administrators: list, create, drop (confirmed by typing the name). */
import { useEffect, useRef, useState } from 'preact/hooks';
import { Api, ApiError } from './api.ts';
import { Header } from './header.tsx';
import { formatTime, useApp } from './state.ts';

interface DatabaseInfo { name: string; dateCreated?: number; createdBy?: string }

export function AdminPage() {
  const app = useApp();
  const [list, setList] = useState<DatabaseInfo[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [name, setName] = useState('');
  const [nameError, setNameError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [dropping, setDropping] = useState<string | undefined>();
  const [confirmName, setConfirmName] = useState('');
  const dialog = useRef<HTMLDialogElement>(null);
  const web = `${app.config.contextPath}/web`;

  const load = async () => {
    try {
      setList(Api.unwrap(await app.api.client.GET('/api/admin/databases', {})) as DatabaseInfo[]);
    } catch (e) {
      setError(e instanceof ApiError && e.status === 403 ? app.t('adminOnly') : String((e as Error).message));
    }
  };
  useEffect(() => { void load(); }, []);

  const create = async (e: Event) => {
    e.preventDefault();
    setNameError(undefined);
    setNotice(undefined);
    try {
      Api.unwrap(await app.api.client.POST('/api/admin/databases', { body: { name: name.trim() } }));
      setNotice(app.t('adminCreatedOk', { name: name.trim() }));
      setName('');
      await load();
    } catch (err) {
      if (err instanceof ApiError) {
        const v = err.payload?.violations?.filter((x) => String(x.path).replace(/^\//, '') === 'name').map((x) => x.message);
        setNameError(v?.length ? v.join(' ') : err.message);
      } else setNameError(String(err));
    }
  };

  const drop = async (e: Event) => {
    e.preventDefault();
    if (!dropping || confirmName !== dropping) return;
    try {
      Api.unwrap(await app.api.client.DELETE('/api/admin/databases/{name}', { params: { path: { name: dropping } } }));
      setNotice(app.t('adminDropped', { name: dropping }));
    } catch (err) {
      setNotice(err instanceof Error ? err.message : String(err));
    }
    dialog.current?.close();
    setDropping(undefined);
    await load();
  };

  return (
    <div class="layout">
      <Header />
      <main id="main" class="admin" tabIndex={-1}>
        <h1>{app.t('admin')}</h1>
        {notice && <p class="ok notice" role="status">{notice}</p>}
        {error && <p class="error" role="alert">{error}</p>}
        {list && (
          <section aria-labelledby="dbs-heading">
            <h2 id="dbs-heading">{app.t('adminDatabases')}</h2>
            <div class="table-wrap">
            <table>
              <thead><tr><th scope="col">{app.t('adminName')}</th><th scope="col">{app.t('adminCreated')}</th><th scope="col">{app.t('adminCreatedBy')}</th><th scope="col"><span class="visually-hidden">{app.t('adminDrop')}</span></th></tr></thead>
              <tbody>
                {list.map((d) => (
                  <tr key={d.name}>
                    <td><a href={`${web}/${encodeURIComponent(d.name)}`}>{d.name}</a></td>
                    <td>{d.dateCreated ? formatTime(app, d.dateCreated) : ''}</td>
                    <td>{d.createdBy ?? ''}</td>
                    <td><button type="button" class="danger" onClick={() => { setDropping(d.name); setConfirmName(''); dialog.current?.showModal(); }}>{app.t('adminDrop')}<span class="visually-hidden"> {d.name}</span></button></td>
                  </tr>
                ))}
              </tbody>
            </table>
            </div>
          </section>
        )}
        {list && (
          <form class="form" onSubmit={create} noValidate aria-labelledby="create-db-heading">
            <h2 id="create-db-heading">{app.t('adminCreate')}</h2>
            <div class={`field${nameError ? ' invalid' : ''}`}>
              <label for="db-name">{app.t('adminName')}</label>
              <input id="db-name" required value={name} aria-invalid={nameError ? 'true' : undefined} aria-describedby={nameError ? 'db-name-error' : undefined}
                onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
              {nameError && <p class="field-error" id="db-name-error">{nameError}</p>}
            </div>
            <button type="submit" class="primary">{app.t('create')}</button>
          </form>
        )}
        <dialog ref={dialog} aria-labelledby="drop-title" class="confirm">
          <form onSubmit={drop}>
            <h2 id="drop-title">{app.t('adminDrop')} {dropping}</h2>
            <p>{app.t('adminDropConfirm', { name: dropping ?? '' })}</p>
            <div class="field">
              <label for="drop-name">{app.t('adminDropName')}</label>
              <input id="drop-name" autoComplete="off" value={confirmName} onInput={(e) => setConfirmName((e.currentTarget as HTMLInputElement).value)} />
            </div>
            <div class="actions">
              <button type="submit" class="danger" disabled={confirmName !== dropping}>{app.t('adminDrop')}</button>
              <button type="button" onClick={() => { dialog.current?.close(); setDropping(undefined); }}>{app.t('cancel')}</button>
            </div>
          </form>
        </dialog>
      </main>
    </div>
  );
}
