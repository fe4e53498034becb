/**
 * Download and upload on a scheme's or a collection's page (issue 21, on
 * decisions §8): the model downloaded in any of the interface's formats (as
 * of the time-travel state, in the page's language), and a file uploaded
 * into it with the interface's options (operation, dry run). An upload is a
 * job: its statistics feed a progress bar (objects read of the total) and
 * the counts of created, updated, deleted, unchanged and failed objects; a
 * failed job lists the refused objects by business key and place in the
 * file; a completed one shows its change report, which for a dry run is
 * what would be done, with nothing written.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type Obj } from './api.ts';
import { saveAs, send } from './admin-kit.tsx';
import { useApp } from './state.ts';

const FORMATS = ['JSON', 'YAML', 'CSV', 'XLSX', 'XML'] as const;
const OPERATIONS = ['MERGE', 'ADD', 'REPLACE'] as const;
const POLL_MS = 400;

interface Counts { read?: number; created?: number; updated?: number; deleted?: number; unchanged?: number; failed?: number; total?: number }
interface Statistics { status: string; statistics?: Counts }
interface Report { dryRun?: boolean; created?: string[]; updated?: { key: string; properties: string[] }[]; deleted?: string[] }
interface Upload { id: string; dryRun: boolean; statistics?: Statistics; report?: Report; problems?: string[]; error?: string }

export function TransferPanel({ obj, onChanged }: { obj: Obj; onChanged: () => void }) {
  const app = useApp();
  const kind = obj._type === 'Scheme' ? 'schemes' : 'collections';
  const base = `/api/${encodeURIComponent(app.db!)}/${kind}/${encodeURIComponent(obj.id)}`;
  const [format, setFormat] = useState<(typeof FORMATS)[number]>('JSON');
  const [operation, setOperation] = useState<(typeof OPERATIONS)[number]>('MERGE');
  const [dryRun, setDryRun] = useState(true);
  const [file, setFile] = useState<File | undefined>();
  const [failure, setFailure] = useState<string | undefined>();
  const [upload, setUpload] = useState<Upload | undefined>();
  const [busy, setBusy] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const mayUpload = app.canEdit && !app.at;

  const download = async () => {
    setFailure(undefined);
    try {
      const query = new URLSearchParams({ format, language: app.language });
      if (app.version !== undefined) query.set('version', String(app.version));
      const response = await send(app, 'GET', `${base}/download?${query}`);
      await saveAs(response, `${obj.label ?? 'download'}.${format.toLowerCase()}`);
    } catch (e) {
      setFailure(e instanceof Error ? e.message : String(e));
    }
  };

  const start = async (e: Event) => {
    e.preventDefault();
    if (!file || busy) return;
    setFailure(undefined);
    setBusy(true);
    try {
      const form = new FormData();
      form.append('file', file, file.name);
      const query = new URLSearchParams({ operation, language: app.language, ...(dryRun ? { dryRun: 'true' } : {}) });
      const request = new Request(new URL(app.api.url(`${base}/upload?${query}`), location.origin), { method: 'PUT', body: form, credentials: 'same-origin' });
      const response = await app.api.fetch(request);
      const body = await response.json().catch(() => ({}));
      if (response.status !== 202) throw new ApiError(response.status, body, response);
      setUpload({ id: body.id as string, dryRun });
    } catch (err) {
      setFailure(err instanceof ApiError ? err.message : String((err as Error).message ?? err));
      setBusy(false);
    }
  };

  // Follows the job until it has finished; then its report, or its problems.
  useEffect(() => {
    if (!upload || upload.report || upload.problems || upload.error) return;
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const jobs = `/api/${encodeURIComponent(app.db!)}/jobs/${upload.id}`;
    const poll = async () => {
      try {
        const answer = await app.api.call<Statistics>('GET', `${jobs}/statistics`);
        if (!live) return;
        const statistics = answer.data;
        if (statistics.status === 'COMPLETED') {
          const report = (await app.api.call<Report>('GET', `${jobs}/download`)).data;
          if (!live) return;
          setUpload({ ...upload, statistics, report });
          setBusy(false);
          if (!upload.dryRun) onChanged();
        } else if (statistics.status === 'FAILED') {
          const logs = (await app.api.call<{ data: { level: string; message: string }[] }>('GET', `${jobs}/logs`)).data.data;
          if (!live) return;
          setUpload({ ...upload, statistics, problems: logs.filter((l) => l.level === 'ERROR').map((l) => l.message) });
          setBusy(false);
        } else {
          setUpload({ ...upload, statistics });
          timer = setTimeout(() => void poll(), POLL_MS);
        }
      } catch (err) {
        if (!live) return;
        setUpload({ ...upload, error: String((err as Error).message ?? err) });
        setBusy(false);
      }
    };
    void poll();
    return () => { live = false; if (timer) clearTimeout(timer); };
  }, [upload?.id]);

  const counts = upload?.statistics?.statistics;
  const number = (n: number | undefined) => (n ?? 0).toLocaleString(app.language === 'de' ? 'de-DE' : 'en-GB');

  return (
    <section class="transfer" aria-labelledby="transfer-heading">
      <h2 id="transfer-heading">{app.t('transferHeading')}</h2>
      <div class="transfer-row">
        <label for="transfer-format">{app.t('transferFormat')}</label>
        <select id="transfer-format" value={format} onChange={(e) => setFormat((e.currentTarget as HTMLSelectElement).value as typeof format)}>
          {FORMATS.map((f) => <option key={f} value={f}>{f}</option>)}
        </select>
        <button type="button" onClick={() => void download()}>{app.t('transferDownload')}</button>
      </div>
      {mayUpload && (
        <form class="transfer-upload" onSubmit={start}>
          <div class="transfer-row">
            <label for="transfer-file">{app.t('transferFile')}</label>
            <input id="transfer-file" ref={fileInput} type="file" accept=".json,.yaml,.yml,.xml,.xlsx,.zip"
              onChange={(e) => setFile((e.currentTarget as HTMLInputElement).files?.[0])} />
          </div>
          <div class="transfer-row">
            <label for="transfer-operation">{app.t('transferOperation')}</label>
            <select id="transfer-operation" value={operation} onChange={(e) => setOperation((e.currentTarget as HTMLSelectElement).value as typeof operation)}>
              {OPERATIONS.map((o) => <option key={o} value={o}>{app.t(`transferOp${o}` as 'transferOpMERGE')}</option>)}
            </select>
            <label class="inline"><input type="checkbox" checked={dryRun} onChange={(e) => setDryRun((e.currentTarget as HTMLInputElement).checked)} /> {app.t('transferDryRun')}</label>
          </div>
          <button type="submit" disabled={!file || busy}>{app.t('transferUpload')}</button>
        </form>
      )}
      {failure && <p class="error" role="alert">{failure}</p>}
      {upload && (
        <div class="transfer-job" role="status" aria-live="polite">
          <p>
            {app.t('transferJob', { status: upload.statistics?.status ?? 'QUEUED' })}{upload.dryRun ? ` ${app.t('transferDryRunNote')}` : ''}
          </p>
          {counts?.total !== undefined && (
            <progress max={counts.total || 1} value={counts.read ?? 0} aria-label={app.t('jobProgress')}>{counts.read ?? 0}/{counts.total}</progress>
          )}
          {counts && (
            <p class="transfer-counts">{app.t('transferCounts', {
              read: number(counts.read), total: number(counts.total), created: number(counts.created), updated: number(counts.updated),
              deleted: number(counts.deleted), unchanged: number(counts.unchanged), failed: number(counts.failed),
            })}</p>
          )}
          {upload.error && <p class="error" role="alert">{upload.error}</p>}
          {upload.problems && (
            <div class="error" role="alert">
              <p>{app.t('transferFailed')}</p>
              <ul class="transfer-problems">{upload.problems.map((p, i) => <li key={i}>{p}</li>)}</ul>
            </div>
          )}
          {upload.report && (
            <div class="transfer-report">
              <h3>{upload.dryRun ? app.t('transferPlanned') : app.t('transferDone')}</h3>
              {!upload.report.created?.length && !upload.report.updated?.length && !upload.report.deleted?.length && <p>{app.t('transferNoChanges')}</p>}
              {!!upload.report.created?.length && (
                <><h4>{app.t('transferCreated')}</h4><ul class="transfer-created">{upload.report.created.map((k) => <li key={k}>{k || obj.label}</li>)}</ul></>
              )}
              {!!upload.report.updated?.length && (
                <><h4>{app.t('transferUpdated')}</h4><ul class="transfer-updated">{upload.report.updated.map((u) => <li key={u.key}>{u.key || obj.label}: {u.properties.join(', ')}</li>)}</ul></>
              )}
              {!!upload.report.deleted?.length && (
                <><h4>{app.t('transferDeleted')}</h4><ul class="transfer-deleted">{upload.report.deleted.map((k) => <li key={k}>{k}</li>)}</ul></>
              )}
            </div>
          )}
        </div>
      )}
    </section>
  );
}
