/**
 * The caller's jobs of a database (issue 21): `GET /api/<db>/jobs?mine=true`,
 * newest first, a page at a time with "Show more" following the list's
 * `next` link. While a job is queued or running the list is asked again
 * every POLL_MS, and each running job's statistics give its progress (rows of
 * a query so far; objects of an upload read of their total). A failed job
 * shows the cause from its log; a completed one offers its result.
 *
 * The query console shows it under the editor; `/web/<db>/jobs` shows it on
 * its own, for anyone signed in, so that a long job can be left and found
 * again after a reload or from another browser.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, type ErrorPayload } from './api.ts';
import { formatTime, useApp, type AppState } from './state.ts';
import type { Schemas } from '../../../client/index.ts';

export type Job = Schemas['QueryJobSummary'];
/** Jobs a page of the list shows. */
export const JOBS_PAGE = 20;
const POLL_MS = 1500;
const EXTENSIONS: Record<string, string> = { CSV: 'csv', JSON: 'json', XML: 'xml', YAML: 'yaml', XLSX: 'xlsx' };

/** A job's progress as its statistics give it while it runs. */
interface Progress { rows?: number; read?: number; total?: number; [k: string]: unknown }

/** A call through the pages' fetch (CSRF token, language) that answers the Response itself, for bodies read as they stream or saved as files. */
export async function send(app: AppState, method: string, path: string, body?: unknown): Promise<Response> {
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
export async function saveAs(response: Response, filename: string): Promise<void> {
  const url = URL.createObjectURL(await response.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** The list of the caller's jobs; `tick` changes when the page started one, so that it is asked again at once. */
export function JobsPanel({ db, tick = 0, headingLevel = 2 }: { db: string; tick?: number; headingLevel?: 1 | 2 }) {
  const app = useApp();
  const [jobs, setJobs] = useState<Job[] | undefined>();
  const [next, setNext] = useState<string | undefined>();
  const [total, setTotal] = useState<number | undefined>();
  const [pages, setPages] = useState(1);
  const [poll, setPoll] = useState(0);
  const [error, setError] = useState<string | undefined>();
  const [progress, setProgress] = useState<Record<string, Progress>>({});
  const [causes, setCauses] = useState<Record<string, string>>({});
  const [logs, setLogs] = useState<Record<string, { level: string; message: string }[] | string>>({});
  const [failure, setFailure] = useState<string | undefined>();

  // The first `pages` pages, asked again while a job on them is queued or running.
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    (async () => {
      const list: Job[] = [];
      let href: string | undefined = `/api/${encodeURIComponent(db)}/jobs?mine=true&limit=${JOBS_PAGE}`;
      let count: number | undefined;
      for (let page = 0; page < pages && href; page++) {
        const answer: { data: { total: number; _embedded: { jobs: Job[] }; _links: { next?: { href: string } } } } = await app.api.call('GET', href);
        list.push(...answer.data._embedded.jobs);
        count = answer.data.total;
        href = answer.data._links.next?.href;
      }
      if (!live) return;
      setJobs(list);
      setTotal(count);
      setNext(href);
      setError(undefined);
      const running = list.filter((j) => j.status === 'QUEUED' || j.status === 'RUNNING');
      const figures = await Promise.all(running.map((j) => app.api.call<{ progress?: Progress; statistics?: Progress }>('GET', j._links.statistics.href).then((a) => [j.id, a.data.progress ?? a.data.statistics] as const, () => [j.id, undefined] as const)));
      if (!live) return;
      setProgress((p) => ({ ...p, ...Object.fromEntries(figures.filter((f): f is readonly [string, Progress] => f[1] !== undefined)) }));
      if (running.length) timer = setTimeout(() => live && setPoll((n) => n + 1), POLL_MS);
    })().catch((e) => live && setError(String((e as Error).message ?? e)));
    return () => { live = false; if (timer) clearTimeout(timer); };
  }, [db, tick, pages, poll]);

  // Why a job failed: the ERROR entries of its log, asked once per failed job.
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

  const download = async (job: Job) => {
    setFailure(undefined);
    try {
      const kind = (job as { kind?: string }).kind ?? 'query';
      await saveAs(await send(app, 'GET', job._links.download.href), `${kind === 'query' ? 'Query' : kind}-${job.id}.${EXTENSIONS[job.format] ?? 'txt'}`);
    } catch (e) {
      setFailure(e instanceof Error ? e.message : String(e));
    }
  };

  const showLog = (job: Job, open: boolean) => {
    if (!open || Array.isArray(logs[job.id])) return;
    app.api.call<{ data: { level: string; message: string }[] }>('GET', job._links.logs.href).then(
      (a) => setLogs((l) => ({ ...l, [job.id]: a.data.data })),
      (e) => setLogs((l) => ({ ...l, [job.id]: String((e as Error).message) })),
    );
  };

  const number = (n: number) => n.toLocaleString(app.language === 'de' ? 'de-DE' : 'en-GB');
  const seconds = (ms: number | null) => (ms === null ? app.t('notSet') : app.t('querySeconds', { seconds: (ms / 1000).toLocaleString(app.language === 'de' ? 'de-DE' : 'en-GB', { maximumFractionDigits: 1 }) }));
  const Heading = headingLevel === 1 ? 'h1' : 'h2';

  return (
    <section class="query-jobs" aria-labelledby="query-jobs-heading">
      <Heading id="query-jobs-heading">{app.t('queryJobs')}</Heading>
      {error && <p class="error" role="alert">{app.t('error', { message: error })}</p>}
      {failure && <p class="error" role="alert">{failure}</p>}
      {!jobs && !error && <p role="status">{app.t('loading')}</p>}
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
              {jobs.map((job) => {
                const p = progress[job.id];
                const running = job.status === 'RUNNING';
                return (
                  <tr key={job.id} data-job={job.id}>
                    <td><code class="statement">{job.statement ?? ''}</code></td>
                    <td>{formatTime(app, job.created)}</td>
                    <td class={`job-state ${job.status.toLowerCase()}`}>
                      {job.status}
                      {running && p && typeof p.total === 'number' && typeof p.read === 'number' && (
                        <> <progress max={p.total} value={p.read} aria-label={app.t('jobProgress')}>{p.read}/{p.total}</progress> <span class="job-progress">{app.t('jobObjects', { done: number(p.read), total: number(p.total) })}</span></>
                      )}
                      {running && p && typeof p.rows === 'number' && p.read === undefined && <span class="job-progress"> {app.t('jobRows', { rows: number(p.rows) })}</span>}
                    </td>
                    <td>{seconds(job.elapsedMs)}</td>
                    <td>
                      {job.status === 'COMPLETED' && (
                        <button type="button" onClick={() => download(job)}>{app.t('queryJobDownload', { format: job.format })}<span class="visually-hidden"> ({formatTime(app, job.created)})</span></button>
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
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {jobs && total !== undefined && jobs.length > 0 && <p class="job-count">{app.t('jobsShown', { shown: number(jobs.length), total: number(total) })}</p>}
      {next && <button type="button" class="more" onClick={() => setPages((n) => n + 1)}>{app.t('showMore')}</button>}
    </section>
  );
}
