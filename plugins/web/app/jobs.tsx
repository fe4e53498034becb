/**
 * The caller's jobs of a database (issue 21): `GET /api/<db>/jobs?mine=true`,
 * newest first, a page at a time with "Show more" following the list's
 * `next` link. While a job is queued or running, its first page is asked
 * again every POLL_MS (and merged with the pages loaded before) and each
 * such job's statistics give its state and progress (rows of a query so
 * far; objects of an upload read of their total). A failed job
 * shows the cause from its log; a completed one offers its result.
 *
 * The query console shows it under the editor; `/web/<db>/jobs` shows it on
 * its own, for anyone signed in, so that a long job can be left and found
 * again after a reload or from another browser.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { saveAs, send } from './admin-kit.tsx';
import { formatTime, useApp, type AppState } from './state.ts';
import type { Schemas } from '../../../client/index.ts';

export type Job = Schemas['QueryJobSummary'];
/** Jobs a page of the list shows. */
export const JOBS_PAGE = 20;
const POLL_MS = 1500;
const EXTENSIONS: Record<string, string> = { CSV: 'csv', JSON: 'json', XML: 'xml', YAML: 'yaml', XLSX: 'xlsx' };

/** A job's progress as its statistics give it while it runs. */
interface Progress { rows?: number; read?: number; total?: number; [k: string]: unknown }

interface ListPage { total: number; _embedded: { jobs: Job[] }; _links: { next?: { href: string } } }
/** What the panel shows: the jobs loaded so far, newest first, and where the next page starts. */
interface Loaded { jobs: Job[]; next?: string; total?: number }

const active = (job: Job) => job.status === 'QUEUED' || job.status === 'RUNNING';

/**
 * The list after the first page was asked again: that page as it is now,
 * then the older jobs loaded before ("Show more") that lie beyond it.
 * Pages are keyset pages (newest first), so jobs started meanwhile push
 * older ones off the first page without losing them; a job that was on it
 * and is gone (expired) stays gone. The next page starts where the deepest
 * page loaded ended: the first page's own link when nothing beyond it was
 * loaded.
 */
export function mergeFirstPage(loaded: Loaded, page: ListPage): Loaded {
  const first = page._embedded.jobs;
  const next = page._links.next?.href;
  // The first page holds every job there is: none older than it.
  if (!next || !first.length) return { jobs: first, next, total: page.total };
  const onFirst = new Set(first.map((j) => j.id));
  const last = first[first.length - 1];
  const at = loaded.jobs.findIndex((j) => j.id === last.id);
  const older = (at >= 0 ? loaded.jobs.slice(at + 1) : loaded.jobs.filter((j) => j.created < last.created)).filter((j) => !onFirst.has(j.id));
  return { jobs: [...first, ...older], next: older.length ? loaded.next : next, total: page.total };
}

/** A job as its statistics tell it now: its state, and a query's elapsed time. */
function withStatistics(job: Job, figures: { status?: string; progress?: { elapsedMs?: number } } | undefined): Job {
  if (!figures?.status || (figures.status === job.status && figures.progress?.elapsedMs === undefined)) return job;
  return { ...job, status: figures.status as Job['status'], ...(typeof figures.progress?.elapsedMs === 'number' ? { elapsedMs: figures.progress.elapsedMs } : {}) };
}

/**
 * The list of the caller's jobs; `tick` changes when the page started one,
 * so that it is asked again at once. While a job is queued or running, each
 * poll asks for the first page (where new jobs appear) and for the
 * statistics of each such job, wherever it is in the list: the pages that
 * "Show more" added are never asked again.
 */
export function JobsPanel({ db, tick = 0, headingLevel = 2 }: { db: string; tick?: number; headingLevel?: 1 | 2 }) {
  const app = useApp();
  const [loaded, setLoadedState] = useState<Loaded | undefined>();
  const current = useRef<Loaded>({ jobs: [] });
  // Another database's jobs are no pages of this one's list.
  const listedDb = useRef(db);
  if (listedDb.current !== db) {
    listedDb.current = db;
    current.current = { jobs: [] };
  }
  const setLoaded = (next: Loaded) => { current.current = next; setLoadedState(next); };
  const [poll, setPoll] = useState(0);
  const [loadingMore, setLoadingMore] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [progress, setProgress] = useState<Record<string, Progress>>({});
  const [causes, setCauses] = useState<Record<string, string>>({});
  const [logs, setLogs] = useState<Record<string, { level: string; message: string }[] | string>>({});
  const [failure, setFailure] = useState<string | undefined>();
  const jobs = loaded?.jobs;

  // The first page and the statistics of the jobs that run, asked again while any does.
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    (async () => {
      const first = (await app.api.call<ListPage>('GET', `/api/${encodeURIComponent(db)}/jobs?mine=true&limit=${JOBS_PAGE}`)).data;
      if (!live) return;
      const ids = new Set(first._embedded.jobs.map((j) => j.id));
      const running = [...first._embedded.jobs, ...current.current.jobs.filter((j) => !ids.has(j.id))].filter(active);
      type Figures = { status?: string; progress?: Progress & { elapsedMs?: number }; statistics?: Progress };
      const answers = await Promise.all(running.map((j) => app.api.call<Figures>('GET', j._links.statistics.href).then((a) => [j.id, a.data] as const, () => [j.id, undefined] as const)));
      if (!live) return;
      const figures = new Map(answers);
      // Merged with the list as it is now: "Show more" may have added a page meanwhile.
      const merged = mergeFirstPage(current.current, first);
      setLoaded({ ...merged, jobs: merged.jobs.map((j) => withStatistics(j, figures.get(j.id))) });
      setError(undefined);
      const moving = answers.flatMap(([id, a]) => (a && (a.progress ?? a.statistics) ? [[id, (a.progress ?? a.statistics)!] as const] : []));
      if (moving.length) setProgress((p) => ({ ...p, ...Object.fromEntries(moving) }));
      if (current.current.jobs.some(active)) timer = setTimeout(() => live && setPoll((n) => n + 1), POLL_MS);
    })().catch((e) => live && setError(String((e as Error).message ?? e)));
    return () => { live = false; if (timer) clearTimeout(timer); };
  }, [db, tick, poll]);

  /** The next page, added once; a job on it that runs is followed from the next poll on. */
  const showMore = async () => {
    const href = current.current.next;
    if (!href || loadingMore) return;
    setLoadingMore(true);
    try {
      const page = (await app.api.call<ListPage>('GET', href)).data;
      const now = current.current;
      const known = new Set(now.jobs.map((j) => j.id));
      const added = page._embedded.jobs.filter((j) => !known.has(j.id));
      setLoaded({ jobs: [...now.jobs, ...added], next: page._links.next?.href, total: page.total });
      // Nothing ran before: the poll is not scheduled, so start it.
      if (added.some(active) && !now.jobs.some(active)) setPoll((n) => n + 1);
    } catch (e) {
      setError(String((e as Error).message ?? e));
    } finally {
      setLoadingMore(false);
    }
  };

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
      {jobs && loaded?.total !== undefined && jobs.length > 0 && <p class="job-count">{app.t('jobsShown', { shown: number(jobs.length), total: number(loaded.total) })}</p>}
      {loaded?.next && <button type="button" class="more" onClick={showMore} disabled={loadingMore}>{app.t('showMore')}</button>}
    </section>
  );
}
