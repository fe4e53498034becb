/**
 * `/web/<db>/query`: the query console of administrators (issue 21). An SQL
 * editor (CodeMirror 6, SQL mode, completing the views and columns the
 * caller may read, `GET /api/<db>/queries/views`) with the views listed
 * beside it; Run shows the first page of rows of the synchronous call
 * (`PUT /api/<db>/queries/download`, CSV read as it streams and abandoned
 * after a page); downloads in CSV, JSON and XML through the same call; jobs
 * (`POST …`) in a panel of the caller's jobs of this database, polled while
 * one runs. This module, CodeMirror with it, is loaded by a dynamic import
 * only when the page opens (main.tsx), so the first load stays small.
 *
 * CodeMirror writes its styles through style-mod, which in a document adds a
 * `<style>` element that the pages' Content-Security-Policy refuses; in a
 * shadow root it uses a constructed style sheet instead, which the policy
 * allows. The editor therefore lives in a shadow root of its own.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { Compartment, EditorState, Prec } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, placeholder } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { autocompletion, completionKeymap } from '@codemirror/autocomplete';
import { defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { PostgreSQL, sql } from '@codemirror/lang-sql';
import { parse, type CastingContext } from 'csv-parse/browser/esm/sync';
import { Api, ApiError, type ErrorPayload } from './api.ts';
import type { Language } from './i18n.ts';
import { formatTime, useApp, type AppState } from './state.ts';
import type { Schemas } from '../../../client/index.ts';

/** Rows the table shows of a result: the first page; the rest is never read. */
export const RESULT_PAGE = 100;
const POLL_MS = 1500;
const FORMATS = ['CSV', 'JSON', 'XML'] as const;
type Format = (typeof FORMATS)[number];
const EXTENSIONS: Record<Format, string> = { CSV: 'csv', JSON: 'json', XML: 'xml' };

type View = Schemas['QueryViews']['views'][number];
type Job = Schemas['QueryJobSummary'];
interface Result { columns: string[]; rows: (string | null)[][]; more: boolean }

/** The options of a run beside the format: the state as of (the time-travel picker's `?at=`), the language, the timeout. */
interface RunOptions { version?: number; language: Language; statementTimeout: string }

function downloadPath(db: string, format: Format, options: RunOptions): string {
  const query = new URLSearchParams({ format, language: options.language });
  if (options.version !== undefined) query.set('version', String(options.version));
  if (options.statementTimeout.trim()) query.set('statementTimeout', options.statementTimeout.trim());
  return `/api/${encodeURIComponent(db)}/queries/download?${query}`;
}

/** A call through the pages' fetch (CSRF token, language) that answers the Response itself, for results read as they stream. */
async function send(app: AppState, method: string, path: string, body?: unknown): Promise<Response> {
  const headers = new Headers();
  if (body !== undefined) headers.set('Content-Type', 'application/json');
  const request = new Request(new URL(app.api.url(path), location.origin), {
    method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body),
  });
  const response = await app.api.fetch(request);
  if (!response.ok) {
    let payload: ErrorPayload | undefined;
    try {
      payload = JSON.parse(await response.text());
    } catch { /* not JSON: the status says it */ }
    throw new ApiError(response.status, payload, response);
  }
  return response;
}

/** Saves a response's body as a file: a blob behind an object URL, so that the call could carry the CSRF token. */
async function saveAs(response: Response, filename: string): Promise<void> {
  const url = URL.createObjectURL(await response.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * The CSV records at the start of a text, at most `limit` (csv-parse): a
 * field written as nothing is null, a quoted one (`""` included) is text, as
 * the query interface writes NULL and the empty text. A text that ends inside
 * a quoted field has no more records yet than those before it.
 */
export function csvRecords(text: string, limit: number): (string | null)[][] {
  const options = { to: limit, relax_column_count: true, cast: (value: string, context: CastingContext) => (value === '' && !context.quoting ? null : value) };
  try {
    return parse(text, options) as (string | null)[][];
  } catch {
    // Cut inside a quoted field: what lies before the last line break is whole (or the parse says so again, and there is nothing yet).
    const cut = text.lastIndexOf('\n', text.length - 2);
    if (cut < 0) return [];
    try {
      return parse(text.slice(0, cut + 1), options) as (string | null)[][];
    } catch {
      return [];
    }
  }
}

/** The header and the first page of rows of a CSV answer; stops reading (and so the statement) once it has them. */
async function firstPage(response: Response): Promise<Result> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let done = false;
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) {
        text += decoder.decode();
        if (text && !/\r?\n$/.test(text)) text += '\r\n';
        done = true;
        break;
      }
      text += decoder.decode(chunk.value, { stream: true });
      // Header, a page, and one record more to know whether there is more.
      if (csvRecords(text, RESULT_PAGE + 2).length >= RESULT_PAGE + 2) break;
    }
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
  }
  const records = csvRecords(text, RESULT_PAGE + 2);
  const [header = [], ...rows] = records;
  return { columns: header.map((c) => c ?? ''), rows: rows.slice(0, RESULT_PAGE), more: rows.length > RESULT_PAGE };
}

const editorTheme = EditorView.theme({
  '&': { border: '1px solid #8a8f98', borderRadius: '4px', backgroundColor: '#fff', color: '#1a1a1a', fontSize: '0.95rem' },
  '&.cm-focused': { outline: '3px solid #ffbf47', outlineOffset: '2px', boxShadow: '0 0 0 5px #1b1f24' },
  '.cm-content': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', minHeight: '8rem' },
  '.cm-scroller': { maxHeight: '20rem', overflow: 'auto' },
  '.cm-gutters': { backgroundColor: '#f3f4f6', color: '#4b5563', borderRight: '1px solid #d1d5db' },
  '.cm-placeholder': { color: '#4b5563' },
});

/** The SQL editor: CodeMirror in a shadow root, Ctrl+Enter (Cmd+Enter) runs, Tab leaves it. */
function SqlEditor({ initial, views, label, hint, onChange, onRun }: {
  initial: string; views: View[] | undefined; label: string; hint: string; onChange(text: string): void; onRun(): void;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | undefined>(undefined);
  const schema = useRef(new Compartment());
  const handlers = useRef({ onChange, onRun });
  handlers.current = { onChange, onRun };

  useEffect(() => {
    const root = host.current!.shadowRoot ?? host.current!.attachShadow({ mode: 'open' });
    const run = () => { handlers.current.onRun(); return true; };
    view.current = new EditorView({
      root,
      parent: root,
      state: EditorState.create({
        doc: initial,
        extensions: [
          Prec.highest(keymap.of([{ key: 'Mod-Enter', run }, { key: 'Ctrl-Enter', run }])),
          lineNumbers(),
          history(),
          keymap.of([...completionKeymap, ...defaultKeymap, ...historyKeymap]),
          autocompletion(),
          syntaxHighlighting(defaultHighlightStyle),
          schema.current.of(sql({ dialect: PostgreSQL })),
          placeholder('select label from scheme_view order by label'),
          editorTheme,
          EditorView.lineWrapping,
          EditorView.contentAttributes.of({ 'aria-label': `${label}. ${hint}` }),
          EditorView.updateListener.of((u) => { if (u.docChanged) handlers.current.onChange(u.state.doc.toString()); }),
        ],
      }),
    });
    return () => view.current?.destroy();
  }, []);

  useEffect(() => {
    if (!views || !view.current) return;
    const names = Object.fromEntries(views.map((v) => [v.name, v.columns.map((c) => c.name)]));
    view.current.dispatch({ effects: schema.current.reconfigure(sql({ dialect: PostgreSQL, schema: names })) });
  }, [views]);

  return <div class="sql-editor" ref={host} />;
}

export function QueryConsole() {
  const app = useApp();
  const db = app.db!;
  const key = `mds-query:${app.config.contextPath}:${db}`;
  const [text, setText] = useState(() => {
    try { return sessionStorage.getItem(key) ?? ''; } catch { return ''; }
  });
  const [views, setViews] = useState<View[] | undefined>();
  const [viewsError, setViewsError] = useState<string | undefined>();
  const [result, setResult] = useState<Result | undefined>();
  const [failure, setFailure] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [format, setFormat] = useState<Format>('CSV');
  const [notice, setNotice] = useState<string | undefined>();
  const [jobs, setJobs] = useState<Job[] | undefined>();
  const [jobTick, setJobTick] = useState(0);
  const [causes, setCauses] = useState<Record<string, string>>({});
  const [logs, setLogs] = useState<Record<string, { level: string; message: string }[] | string>>({});
  const [resultLanguage, setResultLanguage] = useState<Language>(app.language);
  const [timeout, setTimeoutText] = useState('');
  const options: RunOptions = { version: app.version, language: resultLanguage, statementTimeout: timeout };
  const current = useRef(text);
  current.current = text;

  useEffect(() => {
    let live = true;
    app.api.client.GET('/api/{db}/queries/views', { params: { path: { db } } }).then(
      (r) => { if (live) setViews(Api.unwrap(r).views); },
      (e) => { if (live) setViewsError(String((e as Error).message)); },
    ).catch((e) => live && setViewsError(String((e as Error).message)));
    return () => { live = false; };
  }, [db]);

  // The caller's jobs of this database; asked again every POLL_MS while one is queued or running.
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    app.api.client.GET('/api/{db}/jobs', { params: { path: { db }, query: { mine: true, limit: 20 } } }).then((r) => {
      if (!live) return;
      const list = Api.unwrap(r)._embedded.jobs;
      setJobs(list);
      if (list.some((j) => j.status === 'QUEUED' || j.status === 'RUNNING')) timer = setTimeout(() => live && setJobTick((n) => n + 1), POLL_MS);
    }, () => undefined);
    return () => { live = false; if (timer) clearTimeout(timer); };
  }, [db, jobTick]);

  // Why a job failed: the ERROR entries of its log (its statistics only say that the log holds the cause), asked once per failed job.
  useEffect(() => {
    for (const job of jobs ?? []) {
      if (job.status !== 'FAILED' || job.id in causes) continue;
      setCauses((c) => ({ ...c, [job.id]: '' }));
      app.api.call<{ data: { level: string; message: string }[] }>('GET', job._links.logs.href).then(
        (a) => setCauses((c) => ({ ...c, [job.id]: a.data.data.filter((m) => m.level === 'ERROR').map((m) => m.message).join(' ') })),
        (e) => setCauses((c) => ({ ...c, [job.id]: String((e as Error).message) })),
      );
    }
  }, [jobs]);

  const change = (value: string) => {
    setText(value);
    try { sessionStorage.setItem(key, value); } catch { /* storage off: the text is not kept */ }
  };

  const failed = (e: unknown) => setFailure(e instanceof Error ? e.message : String(e));

  const run = async () => {
    const statement = current.current;
    if (busy || !statement.trim()) return;
    setBusy(true);
    setFailure(undefined);
    setNotice(undefined);
    try {
      setResult(await firstPage(await send(app, 'PUT', downloadPath(db, 'CSV', options), { sql: statement })));
    } catch (e) {
      setResult(undefined);
      failed(e);
    } finally {
      setBusy(false);
    }
  };

  const download = async (f: Format) => {
    if (!text.trim()) return;
    setFailure(undefined);
    try {
      await saveAs(await send(app, 'PUT', downloadPath(db, f, options), { sql: text }), `Query.${EXTENSIONS[f]}`);
    } catch (e) {
      failed(e);
    }
  };

  const startJob = async () => {
    if (!text.trim()) return;
    setFailure(undefined);
    try {
      const path = downloadPath(db, format, options);
      await app.api.call('POST', path, { body: { sql: text } });
      setNotice(app.t('queryJobStarted'));
      setJobTick((n) => n + 1);
    } catch (e) {
      failed(e);
    }
  };

  const downloadJob = async (job: Job) => {
    try {
      await saveAs(await send(app, 'GET', job._links.download.href), `Query-${job.id}.${EXTENSIONS[job.format as Format] ?? 'txt'}`);
    } catch (e) {
      failed(e);
    }
  };

  const showLog = (job: Job, open: boolean) => {
    if (!open || Array.isArray(logs[job.id])) return;
    app.api.call<{ data: { level: string; message: string }[] }>('GET', job._links.logs.href).then(
      (a) => setLogs((l) => ({ ...l, [job.id]: a.data.data })),
      (e) => setLogs((l) => ({ ...l, [job.id]: String((e as Error).message) })),
    );
  };

  const seconds = (ms: number | null) => (ms === null ? app.t('notSet') : app.t('querySeconds', { seconds: (ms / 1000).toLocaleString(app.language === 'de' ? 'de-DE' : 'en-GB', { maximumFractionDigits: 1 }) }));

  return (
    <section class="query-console" aria-labelledby="query-heading">
      <h1 id="query-heading">{app.t('queryConsole')}</h1>
      <div class="query-grid">
        <div class="query-main">
          <p class="label" aria-hidden="true">{app.t('queryStatement')}</p>
          <SqlEditor key={app.language} initial={text} views={views} label={app.t('queryStatement')} hint={app.t('queryKeys')} onChange={change} onRun={run} />
          <p class="hint" id="query-keys">{app.t('queryKeys')}</p>
          <fieldset class="query-options">
            <legend>{app.t('queryOptions')}</legend>
            <div class="field">
              <label for="query-language">{app.t('queryLanguage')}</label>
              <select id="query-language" value={resultLanguage} onChange={(e) => setResultLanguage((e.currentTarget as HTMLSelectElement).value as Language)}>
                {app.config.languages.map((l) => <option key={l} value={l}>{l === 'de' ? 'Deutsch' : 'English'}</option>)}
              </select>
            </div>
            <div class="field">
              <label for="query-timeout">{app.t('queryTimeout')}</label>
              <input id="query-timeout" type="number" min="0" step="1" inputMode="numeric" value={timeout} aria-describedby="query-timeout-help"
                onInput={(e) => setTimeoutText((e.currentTarget as HTMLInputElement).value)} />
              <p class="help" id="query-timeout-help">{app.t('queryTimeoutHelp')}</p>
            </div>
            <p class="hint">{app.version !== undefined ? app.t('queryAsOf', { at: formatTime(app, app.version) }) : app.t('queryNow')}</p>
          </fieldset>
          <div class="actions query-actions">
            <button type="button" class="primary" onClick={run} disabled={busy} aria-keyshortcuts="Control+Enter">{app.t('queryRun')}</button>
            {FORMATS.map((f) => (
              <button key={f} type="button" onClick={() => download(f)}>{app.t('queryDownload', { format: f })}</button>
            ))}
          </div>
          <div class="actions query-job-start">
            <label for="query-job-format">{app.t('queryJobFormat')}</label>
            <select id="query-job-format" value={format} onChange={(e) => setFormat((e.currentTarget as HTMLSelectElement).value as Format)}>
              {FORMATS.map((f) => <option key={f} value={f}>{f}</option>)}
            </select>
            <button type="button" onClick={startJob}>{app.t('queryRunJob')}</button>
          </div>
          <div aria-live="polite">
            {busy && <p role="status">{app.t('queryRunning')}</p>}
            {notice && <p class="ok notice" role="status">{notice}</p>}
          </div>
          {failure && <p class="error query-error" role="alert">{failure}</p>}
          {result && (
            <div class="query-result">
              <p role="status">{result.more ? app.t('queryFirstRows', { count: result.rows.length }) : app.t('queryRows', { count: result.rows.length })}</p>
              <div class="table-wrap" tabIndex={0} role="region" aria-label={app.t('queryResult')}>
                <table>
                  <thead><tr>{result.columns.map((c, i) => <th key={i} scope="col">{c}</th>)}</tr></thead>
                  <tbody>
                    {result.rows.map((row, r) => (
                      <tr key={r}>{result.columns.map((_, i) => <td key={i} class={row[i] === null ? 'null' : undefined}>{row[i] ?? app.t('notSet')}</td>)}</tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </div>
          )}
        </div>
        <aside class="query-views" aria-labelledby="query-views-heading">
          <h2 id="query-views-heading">{app.t('queryViews')}</h2>
          {viewsError && <p class="error" role="alert">{viewsError}</p>}
          {!views && !viewsError && <p role="status">{app.t('loading')}</p>}
          {views && (
            <ul class="view-list">
              {views.map((v) => (
                <li key={v.name}>
                  <details>
                    <summary>{v.name}</summary>
                    <ul>{v.columns.map((c) => <li key={c.name}><code>{c.name}</code> <span class="hint">{c.type}</span></li>)}</ul>
                  </details>
                </li>
              ))}
            </ul>
          )}
        </aside>
      </div>
      <section class="query-jobs" aria-labelledby="query-jobs-heading">
        <h2 id="query-jobs-heading">{app.t('queryJobs')}</h2>
        {!jobs && <p role="status">{app.t('loading')}</p>}
        {jobs && jobs.length === 0 && <p>{app.t('queryNoJobs')}</p>}
        {jobs && jobs.length > 0 && (
          <div class="table-wrap">
            <table>
              <thead><tr>
                <th scope="col">{app.t('queryJobStatement')}</th>
                <th scope="col">{app.t('queryJobCreated')}</th>
                <th scope="col">{app.t('queryJobState')}</th>
                <th scope="col">{app.t('queryJobElapsed')}</th>
                <th scope="col">{app.t('queryJobResult')}</th>
              </tr></thead>
              <tbody>
                {jobs.map((job) => (
                  <tr key={job.id} data-job={job.id}>
                    <td><code class="statement">{job.statement ?? ''}</code></td>
                    <td>{formatTime(app, job.created)}</td>
                    <td class={`job-state ${job.status.toLowerCase()}`}>{job.status}</td>
                    <td>{seconds(job.elapsedMs)}</td>
                    <td>
                      {job.status === 'COMPLETED' && (
                        <button type="button" onClick={() => downloadJob(job)}>{app.t('queryJobDownload', { format: job.format })}<span class="visually-hidden"> ({formatTime(app, job.created)})</span></button>
                      )}
                      {job.status === 'FAILED' && <span class="error">{causes[job.id] || app.t('loading')}</span>}
                      <details class="job-log" onToggle={(e) => showLog(job, (e.currentTarget as HTMLDetailsElement).open)}>
                        <summary>{app.t('queryJobLog')}<span class="visually-hidden"> ({formatTime(app, job.created)})</span></summary>
                        {typeof logs[job.id] === 'string' && <p class="error">{logs[job.id] as string}</p>}
                        {Array.isArray(logs[job.id]) && (
                          <ul>{(logs[job.id] as { level: string; message: string }[]).map((m, i) => <li key={i} class={m.level === 'ERROR' ? 'error' : undefined}>{m.level}: {m.message}</li>)}</ul>
                        )}
                      </details>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </section>
  );
}
