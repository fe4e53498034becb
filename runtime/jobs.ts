/**
 * Jobs of every kind in one address space (`/api/<db>/jobs/<id>/…`,
 * decisions §5 and §8): the plugin that keeps jobs (the query plugin, whose
 * table they live in) offers this service through the host, and other
 * plugins (uploads) run their work as jobs of their own kind there. A job
 * lives in the database like a query job: any instance answers for it, a job
 * whose instance stopped is FAILED, finished jobs expire.
 */
import type { Language } from './messages.ts';

export interface JobLogEntry {
  level: 'INFO' | 'ERROR';
  message: string;
}

/** What a running job tells the job service. */
export interface JobReporter {
  /** Figures of progress (read, created …), kept in the job's row at most every second while it runs. */
  progress(statistics: Record<string, number>): void;
  /** Aborted when the instance stops: the work should end soon (its job is FAILED). */
  signal: AbortSignal;
}

export interface JobOutcome {
  status: 'COMPLETED' | 'FAILED';
  /** The summary `GET …/statistics` shows. */
  messages: JobLogEntry[];
  /** Appended to the job's logs. */
  logs: JobLogEntry[];
  /** The final figures. */
  statistics: Record<string, number>;
  /** What `GET …/download` answers (a completed or failed job's report), in the job's format. */
  result?: Buffer;
}

export interface JobSubmission {
  db: string;
  /** The job's kind as the list of jobs shows it (`upload`); `query` is the query plugin's own. */
  kind: string;
  /** Of the result: `JSON` … */
  format: string;
  language: Language;
  /** What the list of jobs shows of it (e.g. `MERGE Finance.json`). */
  summary: string;
  owner: { tenant: string; loginId: string };
  run(reporter: JobReporter): Promise<JobOutcome>;
}

export interface JobService {
  /** Records the job as QUEUED and runs it on this instance; its id. */
  submit(job: JobSubmission): Promise<string>;
}
