/**
 * The service's command-line tool (decisions §8): `metadata-service upload|download|query|jobs …`
 * (the package's `bin`, also `npx metadata-service` in a checkout). It is a
 * client like any other: it speaks to a running service through the typed
 * client (client/index.ts) and imports nothing of the service.
 *
 * Where the service is and who calls it come from flags or the environment:
 *   --url / SERVICE_URL            the service, with its context path (default http://127.0.0.1:8080)
 *   --db / SERVICE_DB              the database
 *   --access-key / SERVICE_ACCESS_KEY, or
 *   --login-id / SERVICE_LOGIN_ID with SERVICE_PASSWORD (a password is read
 *                                  from the environment only, never from a flag,
 *                                  so that it stays out of the process list)
 *   --tenant / SERVICE_TENANT      the tenant to sign in to, by label
 *   --language / SERVICE_LANGUAGE  en or de, for the service's messages
 *
 * A job's progress is a bar on a terminal and plain lines otherwise (on
 * stderr, so that a result streamed to stdout stays clean). A failed job's
 * messages and logs are printed and the tool exits with 1; a refused call
 * (4xx/5xx) prints the service's message and exits with 2; wrong usage
 * exits with 64.
 */
import { createWriteStream, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Command, CommanderError, Option } from 'commander';
import cliProgress from 'cli-progress';
import { createClient, type ClientOptions, type ServiceClient } from './index.ts';

export const EXIT = { ok: 0, failed: 1, refused: 2, usage: 64 } as const;

/** What the tool reads besides its arguments: the environment and where it writes. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Milliseconds between two polls of a job (tests make it short). */
  pollMs?: number;
}

/** A call the service refused: its status and message, for the user. */
export class Refused extends Error {
  constructor(readonly status: number, message: string) { super(message); }
}

interface Connection { client: ServiceClient; db: string; options: ClientOptions }

interface GlobalOptions { url?: string; db?: string; accessKey?: string; loginId?: string; tenant?: string; language?: string }

function connect(global: GlobalOptions, io: CliIo): Connection {
  const env = io.env;
  const baseUrl = global.url ?? env.SERVICE_URL ?? 'http://127.0.0.1:8080';
  const db = global.db ?? env.SERVICE_DB;
  if (!db) throw new CommanderError(EXIT.usage, 'usage', 'Which database? Give --db or set SERVICE_DB.');
  const accessKey = global.accessKey ?? env.SERVICE_ACCESS_KEY;
  const loginId = global.loginId ?? env.SERVICE_LOGIN_ID;
  const password = env.SERVICE_PASSWORD;
  if (!accessKey && !loginId) throw new CommanderError(EXIT.usage, 'usage', 'Who calls? Set SERVICE_ACCESS_KEY, or SERVICE_LOGIN_ID and SERVICE_PASSWORD (or give --access-key / --login-id).');
  if (loginId && password === undefined) throw new CommanderError(EXIT.usage, 'usage', 'SERVICE_PASSWORD is not set: the password of the login ID is read from the environment only.');
  const language = global.language ?? env.SERVICE_LANGUAGE;
  if (language !== undefined && language !== 'en' && language !== 'de') throw new CommanderError(EXIT.usage, 'usage', 'The language is en or de.');
  const options: ClientOptions = {
    baseUrl,
    ...(loginId ? { authorization: { loginId, password: password! } } : {}),
    ...(accessKey ? { accessKey } : {}),
    ...(global.tenant ?? env.SERVICE_TENANT ? { tenant: global.tenant ?? env.SERVICE_TENANT } : {}),
    ...(language ? { language } : {}),
  };
  return { client: createClient(options), db, options };
}

/** The answer's data, or Refused with the service's message. */
function unwrap<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.response.ok && answer.data !== undefined) return answer.data;
  const error = answer.error as { message?: string; violations?: { path?: string; message?: string }[] } | undefined;
  const details = (error?.violations ?? []).map((v) => `\n  ${v.path ? `${v.path}: ` : ''}${v.message ?? ''}`).join('');
  throw new Refused(answer.response.status, `${error?.message ?? answer.response.statusText}${details}`);
}

type Figures = { rows?: number; bytes?: number; elapsedMs?: number; read?: number; total?: number; [k: string]: unknown };
/** A job's statistics: a query's `progress`, an upload's `statistics` (read, created, updated, deleted, unchanged, failed, total). */
type JobState = { status: string; messages?: unknown[]; kind?: string; progress?: Figures; statistics?: Figures };

/** Progress on stderr: a bar on a terminal, a line per change otherwise. */
class ProgressView {
  private bar?: cliProgress.SingleBar;
  private last = '';
  constructor(private io: CliIo, private id: string) {}

  show(state: JobState) {
    const p: Figures = { ...state.progress, ...state.statistics };
    const total = typeof p.total === 'number' ? p.total : undefined;
    const done = typeof p.read === 'number' ? p.read : typeof p.rows === 'number' ? p.rows : 0;
    const unit = typeof p.read === 'number' ? 'objects' : 'rows';
    if (this.io.stderr.isTTY) {
      if (this.bar && total !== undefined && this.bar.getTotal() !== total) this.bar.setTotal(total);
      if (!this.bar) {
        this.bar = new cliProgress.SingleBar({
          stream: this.io.stderr as NodeJS.WritableStream as never,
          format: total !== undefined ? `{status} [{bar}] {value}/{total} ${unit}` : `{status} {value} ${unit}`,
          hideCursor: true,
        }, cliProgress.Presets.shades_classic);
        this.bar.start(total ?? 0, done, { status: state.status });
      }
      this.bar.update(done, { status: state.status });
      return;
    }
    const line = `job ${this.id}: ${state.status}${done || state.progress ? `, ${done}${total !== undefined ? ` of ${total}` : ''} ${unit}` : ''}`;
    if (line !== this.last) this.io.stderr.write(`${line}\n`);
    this.last = line;
  }

  stop() { this.bar?.stop(); }
}

/** Polls a job until it has finished; its last statistics. */
async function watch(c: Connection, id: string, io: CliIo): Promise<JobState> {
  const view = new ProgressView(io, id);
  try {
    for (;;) {
      const answer = await c.client.GET('/api/{db}/jobs/{job}/statistics', { params: { path: { db: c.db, job: id } } });
      const state = unwrap(answer as never) as JobState;
      view.show(state);
      if (answer.response.status === 200) return state;
      await new Promise((resolve) => setTimeout(resolve, io.pollMs ?? 500));
    }
  } finally {
    view.stop();
  }
}

/** Prints a failed job's messages and logs on stderr. */
async function reportFailure(c: Connection, id: string, state: JobState, io: CliIo) {
  io.stderr.write(`job ${id} FAILED\n`);
  for (const m of state.messages ?? []) io.stderr.write(`  ${logLine(m)}\n`);
  const logs = unwrap(await c.client.GET('/api/{db}/jobs/{job}/logs', { params: { path: { db: c.db, job: id } } }) as never) as { data?: unknown[] };
  for (const entry of logs.data ?? []) io.stderr.write(`  ${logLine(entry)}\n`);
}

/** A log entry as a line: `LEVEL: message`. */
function logLine(entry: unknown): string {
  if (typeof entry === 'string') return entry;
  const e = entry as { level?: string; message?: string };
  return e && typeof e.message === 'string' ? `${e.level ? `${e.level}: ` : ''}${e.message}` : JSON.stringify(entry);
}

/** Streams a completed job's result to a file or stdout. */
async function saveResult(c: Connection, id: string, out: string | undefined, io: CliIo) {
  const answer = await c.client.GET('/api/{db}/jobs/{job}/download', { params: { path: { db: c.db, job: id } }, parseAs: 'stream' });
  await saveResponse(answer.response, out, io);
}

/** Streams an answer's body to a file or stdout; Refused with the service's message when it is an error. */
async function saveResponse(response: Response, out: string | undefined, io: CliIo) {
  const answer = { response };
  if (!answer.response.ok || !answer.response.body) {
    const text = await answer.response.text().catch(() => '');
    let message = text;
    try { message = JSON.parse(text).message ?? text; } catch { /* not JSON */ }
    throw new Refused(answer.response.status, message || answer.response.statusText);
  }
  const target = out && out !== '-' ? createWriteStream(out) : io.stdout;
  await pipeline(Readable.fromWeb(answer.response.body as never), target as Writable, { end: target !== io.stdout });
}

const TRANSFER_FORMATS = ['JSON', 'YAML', 'CSV', 'XLSX', 'XML'];

/** The format a file name says (`Finance.yaml`, `Finance.csv.zip`), if any. */
function formatOfName(name: string | undefined): string | undefined {
  const n = (name ?? '').toLowerCase();
  if (n.endsWith('.zip')) return 'CSV';
  if (n.endsWith('.yml')) return 'YAML';
  return TRANSFER_FORMATS.find((f) => n.endsWith(`.${f.toLowerCase()}`));
}

/** The file name of a Content-Disposition (RFC 6266: `filename*` first), without any directory. */
function fileNameOf(header: string | null): string | undefined {
  if (!header) return undefined;
  const extended = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(header)?.[1];
  const plain = /filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header)?.[1] ?? /filename\s*=\s*([^;\s]+)/i.exec(header)?.[1];
  let name: string | undefined;
  try { name = extended ? decodeURIComponent(extended) : plain; } catch { name = plain; }
  return name ? basename(name.replace(/\\/g, '/')) || undefined : undefined;
}

function epochOf(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (/^\d+$/.test(text)) return text;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new CommanderError(EXIT.usage, 'usage', `--as-of takes epoch milliseconds or an ISO 8601 time, not "${text}".`);
  return String(ms);
}

/** Builds the tool's commands; `run` parses and runs them. */
function program(io: CliIo, done: (code: number) => void): Command {
  const root = new Command('metadata-service')
    .description('Command-line tool of the metadata service: uploads, downloads, queries and jobs.')
    .option('--url <url>', 'the service, with its context path (env SERVICE_URL)')
    .option('--db <name>', 'the database (env SERVICE_DB)')
    .option('--access-key <key>', 'an access key (env SERVICE_ACCESS_KEY)')
    .option('--login-id <id>', 'login ID; the password comes from SERVICE_PASSWORD (env SERVICE_LOGIN_ID)')
    .option('--tenant <label>', 'the tenant to sign in to (env SERVICE_TENANT)')
    .addOption(new Option('--language <language>', 'language of the service\'s messages (env SERVICE_LANGUAGE)').choices(['en', 'de']))
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride()
    .showHelpAfterError();
  const global = () => root.opts() as GlobalOptions;

  root.command('query')
    .description('run a read-only SQL statement as a job and stream its result to a file or stdout')
    .argument('[sql]', 'the statement (or --file)')
    .option('-f, --file <path>', 'read the statement from a file (- for stdin)')
    .addOption(new Option('--format <format>', 'format of the result').choices(['CSV', 'JSON', 'XML']).default('CSV'))
    .option('-o, --out <path>', 'write the result to this file (default stdout)')
    .option('--as-of <time>', 'read as of this time (epoch milliseconds or ISO 8601)')
    .option('--statement-timeout <ms>', 'the statement\'s timeout in milliseconds')
    .action(async (sqlArg: string | undefined, opts: { file?: string; format: string; out?: string; asOf?: string; statementTimeout?: string }) => {
      const sql = opts.file !== undefined ? readFileSync(opts.file === '-' ? 0 : opts.file, 'utf8') : sqlArg;
      if (!sql) throw new CommanderError(EXIT.usage, 'usage', 'Give the statement as an argument or with --file.');
      const c = connect(global(), io);
      const version = epochOf(opts.asOf);
      const query = { format: opts.format, ...(version ? { version } : {}), ...(opts.statementTimeout ? { statementTimeout: opts.statementTimeout } : {}) };
      const { id } = unwrap(await c.client.POST('/api/{db}/queries/download', { params: { path: { db: c.db }, query: query as never }, body: { sql } }) as never) as { id: string };
      io.stderr.write(`job ${id} started\n`);
      const state = await watch(c, id, io);
      if (state.status !== 'COMPLETED') {
        await reportFailure(c, id, state, io);
        return done(EXIT.failed);
      }
      await saveResult(c, id, opts.out, io);
      done(EXIT.ok);
    });

  root.command('download')
    .description('download a model (a scheme, a collection) or a tenant\'s users as a file, streamed')
    .option('--scheme <label>', 'the scheme, by label or technical key')
    .option('--collection <id>', 'a collection and everything below it, by technical key')
    .option('--tenant <label>', 'the tenant and its users (administrators)')
    .addOption(new Option('--format <format>', 'file format (default: from --out, else JSON)').choices(TRANSFER_FORMATS))
    .option('--asset-types <types>', 'only these types (comma-separated), with what holds them')
    .option('--as-of <time>', 'the state as of this time (epoch milliseconds or ISO 8601)')
    .option('-o, --out <path>', 'write to this file (- for stdout; default: the name the service gives, or stdout when it is not a terminal)')
    .action(async (opts: { scheme?: string; collection?: string; tenant?: string; format?: string; assetTypes?: string; asOf?: string; out?: string }) => {
      const targets = [opts.scheme, opts.collection, opts.tenant].filter((x) => x !== undefined);
      if (targets.length !== 1) throw new CommanderError(EXIT.usage, 'usage', 'Name exactly one of --scheme, --collection, --tenant.');
      const c = connect(global(), io);
      const format = opts.format ?? formatOfName(opts.out) ?? 'JSON';
      const version = epochOf(opts.asOf);
      const query = { format, ...(opts.assetTypes ? { assetTypes: opts.assetTypes } : {}), ...(version ? { version } : {}) } as never;
      const answer = opts.scheme !== undefined
        ? await c.client.GET('/api/{db}/schemes/{label}/download', { params: { path: { db: c.db, label: opts.scheme }, query }, parseAs: 'stream' })
        : opts.collection !== undefined
          ? await c.client.GET('/api/{db}/collections/{id}/download', { params: { path: { db: c.db, id: opts.collection }, query }, parseAs: 'stream' })
          : await c.client.GET('/api/{db}/tenants/{label}/download', { params: { path: { db: c.db, label: opts.tenant! }, query }, parseAs: 'stream' });
      let out = opts.out;
      if (out === undefined && io.stdout.isTTY) out = fileNameOf(answer.response.headers.get('content-disposition'));
      await saveResponse(answer.response, out, io);
      if (out && out !== '-') io.stderr.write(`saved ${out}\n`);
      done(EXIT.ok);
    });

  root.command('upload')
    .description('upload a file into a scheme or a collection as a job; prints the change report')
    .argument('<file>', 'the file (JSON, YAML, CSV as a zip, XLSX, XML)')
    .option('--scheme <label>', 'the scheme, by label (created when missing) or technical key')
    .option('--collection <id>', 'a collection, by technical key')
    .addOption(new Option('--operation <operation>', 'ADD only creates; MERGE creates and updates; REPLACE also deletes what the file does not name').choices(['ADD', 'MERGE', 'REPLACE']).default('MERGE'))
    .option('--dry-run', 'check and report the changes, write nothing')
    .addOption(new Option('--format <format>', 'file format (default: from the file name)').choices(TRANSFER_FORMATS))
    .action(async (file: string, opts: { scheme?: string; collection?: string; operation: string; dryRun?: boolean; format?: string }) => {
      if ((opts.scheme === undefined) === (opts.collection === undefined)) throw new CommanderError(EXIT.usage, 'usage', 'Name exactly one of --scheme, --collection.');
      const c = connect(global(), io);
      const form = new FormData();
      form.append('file', new Blob([readFileSync(file)]), basename(file));
      const query = { operation: opts.operation, ...(opts.dryRun ? { dryRun: 'true' } : {}), ...(opts.format ? { format: opts.format } : {}) } as never;
      const init = { body: form as never, bodySerializer: (b: unknown) => b as FormData };
      const started = opts.scheme !== undefined
        ? await c.client.PUT('/api/{db}/schemes/{label}/upload', { params: { path: { db: c.db, label: opts.scheme }, query }, ...init })
        : await c.client.PUT('/api/{db}/collections/{id}/upload', { params: { path: { db: c.db, id: opts.collection! }, query }, ...init });
      const { id } = unwrap(started as never) as { id: string };
      io.stderr.write(`job ${id} started\n`);
      const state = await watch(c, id, io);
      if (state.status !== 'COMPLETED') {
        await reportFailure(c, id, state, io);
        return done(EXIT.failed);
      }
      const s = state.statistics ?? {};
      io.stderr.write(`job ${id} COMPLETED${opts.dryRun ? ' (dry run: nothing written)' : ''}: ${['read', 'created', 'updated', 'deleted', 'unchanged', 'failed'].map((k) => `${s[k] ?? 0} ${k}`).join(', ')}\n`);
      await saveResult(c, id, undefined, io);
      done(EXIT.ok);
    });

  const jobs = root.command('jobs').description('the caller\'s jobs of the database');
  jobs.command('list')
    .description('list jobs, newest first')
    .option('--all', 'every job the caller may see, not only the caller\'s own')
    .option('--limit <n>', 'at most this many', '20')
    .action(async (opts: { all?: boolean; limit: string }) => {
      const c = connect(global(), io);
      const page = unwrap(await c.client.GET('/api/{db}/jobs', { params: { path: { db: c.db }, query: { mine: opts.all ? 'false' : 'true', limit: opts.limit } as never } }) as never) as {
        _embedded: { jobs: { id: string; status: string; kind?: string; statement?: string; created: number; elapsedMs?: number | null }[] };
      };
      for (const j of page._embedded.jobs) {
        io.stdout.write(`${j.id}  ${j.status.padEnd(9)}  ${new Date(j.created).toISOString()}  ${j.elapsedMs ?? ''}${j.elapsedMs != null ? ' ms' : ''}  ${j.statement ?? j.kind ?? ''}\n`);
      }
      done(EXIT.ok);
    });
  jobs.command('watch')
    .description('follow a job until it has finished; exits 1 when it failed')
    .argument('<id>')
    .action(async (id: string) => {
      const c = connect(global(), io);
      const state = await watch(c, id, io);
      if (state.status !== 'COMPLETED') {
        await reportFailure(c, id, state, io);
        return done(EXIT.failed);
      }
      io.stderr.write(`job ${id} COMPLETED\n`);
      done(EXIT.ok);
    });
  jobs.command('logs')
    .description('print a job\'s logs')
    .argument('<id>')
    .action(async (id: string) => {
      const c = connect(global(), io);
      const logs = unwrap(await c.client.GET('/api/{db}/jobs/{job}/logs', { params: { path: { db: c.db, job: id } } }) as never) as { data?: unknown[] };
      for (const entry of logs.data ?? []) io.stdout.write(`${logLine(entry)}\n`);
      done(EXIT.ok);
    });
  jobs.command('download')
    .description('stream a completed job\'s result to a file or stdout')
    .argument('<id>')
    .option('-o, --out <path>', 'write to this file (default stdout)')
    .action(async (id: string, opts: { out?: string }) => {
      await saveResult(connect(global(), io), id, opts.out, io);
      done(EXIT.ok);
    });
  return root;
}

/** Runs the tool with the arguments (without node and the script); its exit code. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  let code: number = EXIT.ok;
  try {
    await program(io, (c) => { code = c; }).parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.exitCode === 0) return EXIT.ok;
      if (e.code === 'usage') io.stderr.write(`${e.message}\n`);
      return EXIT.usage;
    }
    if (e instanceof Refused) {
      io.stderr.write(`refused (${e.status}): ${e.message}\n`);
      return EXIT.refused;
    }
    const cause = (e as { cause?: { code?: string } }).cause;
    io.stderr.write(`${cause?.code === 'ECONNREFUSED' ? 'The service does not answer' : (e as Error).message}\n`);
    return EXIT.failed;
  }
}
