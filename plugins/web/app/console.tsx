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
import { Compartment, EditorSelection, EditorState, Prec, StateEffect, StateField } from '@codemirror/state';
import { Decoration, EditorView, keymap, lineNumbers, placeholder, type DecorationSet } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { autocompletion, completionKeymap } from '@codemirror/autocomplete';
import { defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { PostgreSQL, sql } from '@codemirror/lang-sql';
import { parse, type CastingContext } from 'csv-parse/browser/esm/sync';
import { Api, ApiError } from './api.ts';
import { JobsPanel } from './jobs.tsx';
import { saveAs, send } from './admin-kit.tsx';
import type { Language } from './i18n.ts';
import { formatTime, useApp } from './state.ts';
import type { Schemas } from '../../../client/index.ts';

/** Rows the table shows of a result: the first page; the rest is never read. */
export const RESULT_PAGE = 100;
const FORMATS = ['CSV', 'JSON', 'XML'] as const;
type Format = (typeof FORMATS)[number];
const EXTENSIONS: Record<Format, string> = { CSV: 'csv', JSON: 'json', XML: 'xml' };

type View = Schemas['QueryViews']['views'][number];
interface Result { columns: string[]; rows: (string | null)[][]; more: boolean }

/** The options of a run beside the format: the state as of (the time-travel picker's `?at=`), the language, the timeout. */
interface RunOptions { version?: number; language: Language; statementTimeout: string }

function downloadPath(db: string, format: Format, options: RunOptions): string {
  const query = new URLSearchParams({ format, language: options.language });
  if (options.version !== undefined) query.set('version', String(options.version));
  if (options.statementTimeout.trim()) query.set('statementTimeout', options.statementTimeout.trim());
  return `/api/${encodeURIComponent(db)}/queries/download?${query}`;
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

/** Where in the statement an error lies: the text to underline (UTF-16 offsets, as the editor counts) and its line and column. */
export interface ErrorPlace { from: number; to: number; line: number; column: number }

/**
 * The place of the service's `position` (1-based, in characters: code
 * points, as PostgreSQL counts them) in the statement that was sent: the
 * word or quoted name that starts there, else one character; past the end,
 * the last character before it. Undefined when it does not fit the text.
 */
export function errorPlace(text: string, position: number): ErrorPlace | undefined {
  const chars = Array.from(text);
  if (!Number.isInteger(position) || position < 1 || position > chars.length + 1) return undefined;
  const at = chars.slice(0, position - 1).join('').length;
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  const line = text.slice(0, at).split('\n').length;
  const column = Array.from(text.slice(lineStart, at)).length + 1;
  const token = /^(?:[\p{L}\p{N}_$]+|"(?:[^"]|"")*"|::[\p{L}\p{N}_]*|\S)/u.exec(text.slice(at));
  if (token) return { from: at, to: at + token[0].length, line, column };
  // At the end or on white space: the character before it, if there is one.
  const before = text.slice(0, at).trimEnd().length;
  return { from: Math.max(0, before - 1), to: before, line, column };
}

/** The error's place in the editor: set with the answer of a run, cleared with the next; it moves with edits. */
const setErrorMark = StateEffect.define<{ from: number; to: number } | null>();
const errorMark = Decoration.mark({ class: 'cm-query-error' });
const errorMarks = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, tr) {
    let next = marks.map(tr.changes);
    for (const e of tr.effects) {
      if (e.is(setErrorMark)) next = e.value && e.value.to > e.value.from ? Decoration.set([errorMark.range(e.value.from, e.value.to)]) : Decoration.none;
    }
    return next;
  },
  provide: (field) => EditorView.decorations.from(field),
});

const editorTheme = EditorView.theme({
  '&': { border: '1px solid #8a8f98', borderRadius: '4px', backgroundColor: '#fff', color: '#1a1a1a', fontSize: '0.95rem' },
  '&.cm-focused': { outline: '3px solid #ffbf47', outlineOffset: '2px', boxShadow: '0 0 0 5px #1b1f24' },
  '.cm-content': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', minHeight: '8rem' },
  '.cm-scroller': { maxHeight: '20rem', overflow: 'auto' },
  '.cm-gutters': { backgroundColor: '#f3f4f6', color: '#4b5563', borderRight: '1px solid #d1d5db' },
  '.cm-placeholder': { color: '#4b5563' },
  // Not by colour alone: a wavy underline, and a light background that keeps the text's contrast.
  '.cm-query-error': { textDecoration: 'underline wavy #b00020', textDecorationSkipInk: 'none', textUnderlineOffset: '3px', backgroundColor: '#fde8ea' },
});

/** What the console asks of the editor beyond its text: to mark an error's place, and to put the cursor there. */
export interface EditorHandle {
  /** Marks the place when the editor still holds `text` (the statement that was run); null clears the mark. */
  mark(place: ErrorPlace | null, text?: string): void;
  /** Focuses the editor with the cursor at the place. */
  goTo(place: ErrorPlace): void;
}

/** The SQL editor: CodeMirror in a shadow root, Ctrl+Enter (Cmd+Enter) runs, Tab leaves it. */
function SqlEditor({ initial, views, label, hint, onChange, onRun, handle }: {
  initial: string; views: View[] | undefined; label: string; hint: string; onChange(text: string): void; onRun(): void; handle: { current: EditorHandle | undefined };
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
          errorMarks,
        ],
      }),
    });
    handle.current = {
      mark(place, text) {
        const v = view.current;
        if (!v) return;
        if (!place || (text !== undefined && v.state.doc.toString() !== text)) {
          v.dispatch({ effects: setErrorMark.of(null) });
          return;
        }
        // The cursor goes there too, and the place is scrolled to; the focus stays where it is (on the error message's button).
        v.dispatch({
          effects: [setErrorMark.of({ from: place.from, to: place.to }), EditorView.scrollIntoView(place.from, { y: 'center' })],
          selection: EditorSelection.cursor(place.from),
        });
      },
      goTo(place) {
        const v = view.current;
        if (!v) return;
        const at = Math.min(place.from, v.state.doc.length);
        v.dispatch({ selection: EditorSelection.cursor(at), effects: EditorView.scrollIntoView(at, { y: 'center' }) });
        v.focus();
      },
    };
    return () => { handle.current = undefined; view.current?.destroy(); };
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
  const [failurePlace, setFailurePlace] = useState<ErrorPlace | undefined>();
  const editor = useRef<EditorHandle | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [format, setFormat] = useState<Format>('CSV');
  const [notice, setNotice] = useState<string | undefined>();
  const [jobTick, setJobTick] = useState(0);
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

  const change = (value: string) => {
    setText(value);
    try { sessionStorage.setItem(key, value); } catch { /* storage off: the text is not kept */ }
  };

  /** Shows the service's message as it words it; where it gives a position in the statement that was sent, marks it. */
  const failed = (e: unknown, statement?: string) => {
    setFailure(e instanceof Error ? e.message : String(e));
    const position = e instanceof ApiError ? (e.payload as { position?: unknown } | undefined)?.position : undefined;
    const place = statement !== undefined && typeof position === 'number' ? errorPlace(statement, position) : undefined;
    setFailurePlace(place);
    editor.current?.mark(place ?? null, statement);
  };

  const cleared = () => {
    setFailure(undefined);
    setFailurePlace(undefined);
    editor.current?.mark(null);
  };

  const run = async () => {
    const statement = current.current;
    if (busy || !statement.trim()) return;
    setBusy(true);
    cleared();
    setNotice(undefined);
    try {
      setResult(await firstPage(await send(app, 'PUT', downloadPath(db, 'CSV', options), { sql: statement })));
    } catch (e) {
      setResult(undefined);
      failed(e, statement);
    } finally {
      setBusy(false);
    }
  };

  const download = async (f: Format) => {
    if (!text.trim()) return;
    const statement = text;
    cleared();
    try {
      await saveAs(await send(app, 'PUT', downloadPath(db, f, options), { sql: statement }), `Query.${EXTENSIONS[f]}`);
    } catch (e) {
      failed(e, statement);
    }
  };

  const startJob = async () => {
    if (!text.trim()) return;
    cleared();
    try {
      const path = downloadPath(db, format, options);
      await app.api.call('POST', path, { body: { sql: text } });
      setNotice(app.t('queryJobStarted'));
      setJobTick((n) => n + 1);
    } catch (e) {
      failed(e);
    }
  };

  return (
    <section class="query-console" aria-labelledby="query-heading">
      <h1 id="query-heading">{app.t('queryConsole')}</h1>
      <div class="query-grid">
        <div class="query-main">
          <p class="label" aria-hidden="true">{app.t('queryStatement')}</p>
          <SqlEditor key={app.language} initial={text} views={views} label={app.t('queryStatement')} hint={app.t('queryKeys')} onChange={change} onRun={run} handle={editor} />
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
          {failure && (
            <div class="error query-error" role="alert">
              <p>{failure}</p>
              {failurePlace && (
                <p class="query-error-place">
                  <button type="button" class="link-button" onClick={() => editor.current?.goTo(failurePlace)}>
                    {app.t('queryErrorAt', { line: failurePlace.line, column: failurePlace.column })}
                  </button>
                </p>
              )}
            </div>
          )}
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
      <JobsPanel db={db} tick={jobTick} />
    </section>
  );
}
