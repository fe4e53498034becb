/**
 * The profiles section of the tenant page (issue 21): the tenant's
 * `annotations` and `profile`, the standard ones (download only), and the
 * tenant's named profiles (`GET/POST /api/<db>/profiles`,
 * `DELETE /api/<db>/profiles/<name>`), which schemes name under `profiles`.
 * Each can be downloaded; the tenant's own and the named ones uploaded (a
 * file dropped or picked, or the text edited in the YAML editor, a chunk of
 * its own loaded when it opens). The service's answer is shown as it words
 * it: changed or unchanged, or each problem with line and column; a named
 * profile that a scheme still names cannot be deleted (409, naming them).
 */
import { useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';
import { Confirm, message, saveAs, send, violationsOf } from './admin-kit.tsx';
import { formatTime, useApp } from './state.ts';
import { useNamedProfiles, type ProfileInfo } from './named-profiles.ts';
import type { YamlEditor as YamlEditorType } from './yaml-editor.tsx';

/** The profiles a tenant uploads, and the standard ones, which are only downloaded. */
const TENANT_PROFILES = ['annotations', 'profile'] as const;
const STANDARD_PROFILES = ['standard-annotations', 'standard-profile'] as const;

interface UploadAnswer { profile: string; changed?: boolean; problems?: string[] }

export function Profiles() {
  const app = useApp();
  const db = app.db!;
  const { named, error: listError, refresh } = useNamedProfiles(db);
  const [target, setTarget] = useState<string>('annotations');
  const [answer, setAnswer] = useState<UploadAnswer | undefined>();
  const [busy, setBusy] = useState(false);
  const [dragging, setDragging] = useState(false);
  const [editor, setEditor] = useState<{ profile: string; text: string } | undefined>();
  const [Editor, setEditorModule] = useState<{ c: typeof YamlEditorType } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [deleting, setDeleting] = useState<string | undefined>();
  const edited = useRef('');
  const path = (name: string, action?: 'download' | 'upload') => `/api/${encodeURIComponent(db)}/profiles/${encodeURIComponent(name)}${action ? `/${action}` : ''}`;
  const uploadable = [...TENANT_PROFILES, ...(named ?? []).map((p) => p.name)];

  const download = async (name: string) => {
    setError(undefined);
    try {
      await saveAs(await send(app, 'GET', path(name, 'download')), `${name}.yaml`);
    } catch (err) {
      setError(message(err));
    }
  };

  const upload = async (name: string, file: Blob, filename: string) => {
    setBusy(true);
    setAnswer(undefined);
    setNotice(undefined);
    const form = new FormData();
    form.append('file', file, filename);
    try {
      const response = await send(app, 'PUT', path(name, 'upload'), form);
      const changed = JSON.parse(await response.text()) === true;
      setAnswer({ profile: name, changed });
      // The tenant's own apply everywhere, a named one to the schemes naming it: the forms and labels change.
      if (changed) app.refreshMeta();
      if (!(TENANT_PROFILES as readonly string[]).includes(name)) refresh();
      return true;
    } catch (err) {
      setAnswer({ profile: name, problems: violationsOf(err) });
      return false;
    } finally {
      setBusy(false);
    }
  };

  const chosen = (files: FileList | null | undefined) => {
    const file = files?.[0];
    if (file) void upload(target, file, file.name);
  };

  const openEditor = async (name: string) => {
    setError(undefined);
    try {
      const [module, text] = await Promise.all([
        Editor ? Promise.resolve(Editor) : import('./yaml-editor.tsx').then((m) => ({ c: m.YamlEditor })),
        send(app, 'GET', path(name, 'download')).then((r) => r.text()),
      ]);
      setEditorModule(module);
      edited.current = text;
      setEditor({ profile: name, text });
      setAnswer(undefined);
    } catch (err) {
      setError(message(err));
    }
  };

  const uploadEdited = async () => {
    if (!editor) return;
    const ok = await upload(editor.profile, new Blob([edited.current], { type: 'application/yaml' }), `${editor.profile}.yaml`);
    if (ok) setEditor({ ...editor, text: edited.current });
  };

  const remove = async () => {
    const name = deleting!;
    setDeleting(undefined);
    setError(undefined);
    setNotice(undefined);
    try {
      await app.api.call('DELETE', path(name));
      setNotice(app.t('profileDeleted', { profile: name }));
      if (editor?.profile === name) setEditor(undefined);
      if (target === name) setTarget('annotations');
      refresh();
    } catch (err) {
      // A scheme that names it: the service names the schemes.
      setError(violationsOf(err).join(' '));
    }
  };

  const created = (name: string) => {
    setNotice(app.t('profileCreated', { profile: name }));
    setTarget(name);
    refresh();
  };

  const row = (name: string, hint: string, own: boolean, extra?: ProfileInfo) => (
    <tr key={name} data-profile={name}>
      <th scope="row">{name}{hint && <> <span class="hint">{hint}</span></>}</th>
      {extra !== undefined && <td>{extra.modifiedBy ? app.t('profileModified', { by: extra.modifiedBy, at: formatTime(app, extra.dateModified!) }) : ''}</td>}
      <td class="row-actions">
        <button type="button" onClick={() => download(name)}>{app.t('download')}<span class="visually-hidden"> {name}</span></button>
        {own && <button type="button" onClick={() => openEditor(name)}>{app.t('profileEdit')}<span class="visually-hidden"> {name}</span></button>}
        {extra !== undefined && <button type="button" class="danger" onClick={() => setDeleting(name)}>{app.t('delete')}<span class="visually-hidden"> {name}</span></button>}
      </td>
    </tr>
  );

  return (
    <section class="tenant-section" aria-labelledby="profiles-heading">
      <h2 id="profiles-heading">{app.t('profiles')}</h2>
      <div class="table-wrap">
        <table>
          <thead><tr><th scope="col">{app.t('profile')}</th><th scope="col"><span class="visually-hidden">{app.t('actions')}</span></th></tr></thead>
          <tbody>
            {[...TENANT_PROFILES, ...STANDARD_PROFILES].map((name) => row(name, app.t(`profileHint.${name}`), (TENANT_PROFILES as readonly string[]).includes(name)))}
          </tbody>
        </table>
      </div>

      <section class="named-profiles" aria-labelledby="named-profiles-heading">
        <h3 id="named-profiles-heading">{app.t('profilesNamed')}</h3>
        <p class="hint">{app.t('profilesNamedHint')}</p>
        {listError && <p class="error" role="alert">{listError}</p>}
        {!named && !listError && <p role="status">{app.t('loading')}</p>}
        {named && named.length === 0 && <p>{app.t('profilesNamedNone')}</p>}
        {named && named.length > 0 && (
          <div class="table-wrap">
            <table>
              <thead><tr>
                <th scope="col">{app.t('profile')}</th>
                <th scope="col">{app.t('profileChangedBy')}</th>
                <th scope="col"><span class="visually-hidden">{app.t('actions')}</span></th>
              </tr></thead>
              <tbody>{named.map((p) => row(p.name, '', true, p))}</tbody>
            </table>
          </div>
        )}
        <CreateNamed onCreated={created} />
      </section>
      <div aria-live="polite">{notice && <p class="ok notice" role="status">{notice}</p>}</div>
      {error && <p class="error" role="alert">{error}</p>}

      <form class="form upload" onSubmit={(e) => e.preventDefault()} aria-labelledby="upload-heading">
        <h3 id="upload-heading">{app.t('profileUpload')}</h3>
        <div class="field">
          <label for="upload-target">{app.t('profileTarget')}</label>
          <select id="upload-target" value={target} onChange={(e) => setTarget((e.currentTarget as HTMLSelectElement).value)}>
            {uploadable.map((p) => <option key={p} value={p}>{p}</option>)}
          </select>
        </div>
        <div class={`drop-zone${dragging ? ' dragging' : ''}`}
          onDragOver={(e) => { e.preventDefault(); setDragging(true); }}
          onDragLeave={() => setDragging(false)}
          onDrop={(e) => { e.preventDefault(); setDragging(false); chosen(e.dataTransfer?.files); }}>
          <p>{app.t('profileDrop')}</p>
          <label for="upload-file">{app.t('profileFile')}</label>
          <input id="upload-file" type="file" accept=".yaml,.yml,application/yaml,text/yaml" onChange={(e) => { chosen((e.currentTarget as HTMLInputElement).files); (e.currentTarget as HTMLInputElement).value = ''; }} />
        </div>
      </form>
      <div aria-live="polite" class="upload-answer">
        {busy && <p role="status">{app.t('profileUploading')}</p>}
        {answer && !answer.problems && <p class="ok notice" role="status">{app.t(answer.changed ? 'profileChanged' : 'profileUnchanged', { profile: answer.profile })}</p>}
      </div>
      {answer?.problems && (
        <div class="error problems" role="alert">
          <p>{app.t('profileRefused', { profile: answer.profile })}</p>
          <ul>{answer.problems.map((p, i) => <li key={i}>{p}</li>)}</ul>
        </div>
      )}
      {editor && Editor && (
        <section class="yaml-editing" aria-labelledby="yaml-heading">
          <h3 id="yaml-heading">{app.t('profileEditing', { profile: editor.profile })}</h3>
          <Editor.c key={`${editor.profile}:${editor.text.length}:${app.language}`} initial={editor.text} label={app.t('profileEditorLabel', { profile: editor.profile })} onChange={(text) => { edited.current = text; }} />
          <div class="actions">
            <button type="button" class="primary" onClick={uploadEdited} disabled={busy}>{app.t('profileUploadEdited')}</button>
            <button type="button" onClick={() => setEditor(undefined)}>{app.t('close')}</button>
          </div>
        </section>
      )}
      <Confirm open={deleting !== undefined} title={app.t('profileDeleteTitle', { profile: deleting ?? '' })} text={app.t('profileDeleteConfirm', { profile: deleting ?? '' })}
        action={app.t('delete')} onConfirm={remove} onClose={() => setDeleting(undefined)} />
    </section>
  );
}

/** Creates a named profile: its name, checked by the service (the violation shown at the field). */
function CreateNamed({ onCreated }: { onCreated(name: string): void }) {
  const app = useApp();
  const [name, setName] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setProblem(undefined);
    try {
      await app.api.call('POST', `/api/${encodeURIComponent(app.db!)}/profiles`, { body: { name } });
      setName('');
      onCreated(name);
    } catch (err) {
      setProblem(err instanceof ApiError ? violationsOf(err, 'name').join(' ') : message(err));
      setTimeout(() => field.current?.focus());
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="form inline create-profile" onSubmit={submit} aria-labelledby="create-profile-heading" noValidate>
      <h4 id="create-profile-heading">{app.t('profileCreate')}</h4>
      <div class={`field${problem ? ' invalid' : ''}`}>
        <label for="create-profile-name">{app.t('profileName')}</label>
        <input id="create-profile-name" ref={field} value={name} required maxLength={100} aria-invalid={problem ? 'true' : undefined}
          aria-describedby={problem ? 'create-profile-help create-profile-error' : 'create-profile-help'}
          onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
        <p class="help" id="create-profile-help">{app.t('profileNameHelp')}</p>
        {problem && <p class="field-error" id="create-profile-error">{problem}</p>}
      </div>
      <div class="actions"><button type="submit" class="primary" disabled={busy}>{app.t('profileCreateButton')}</button></div>
    </form>
  );
}
