/**
 * The service's command-line tool (decisions §8): `metadata-service query|jobs …`
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

type JobState = { status: string; messages?: string[]; progress?: { rows?: number; bytes?: number; elapsedMs?: number; [k: string]: unknown } & Record<string, unknown> };

/** Progress on stderr: a bar on a terminal, a line per change otherwise. */
class ProgressView {
  private bar?: cliProgress.SingleBar;
  private last = '';
  constructor(private io: CliIo, private id: string) {}

  show(state: JobState) {
    const p = state.progress ?? {};
    const total = typeof p.total === 'number' ? p.total : undefined;
    const done = typeof p.read === 'number' ? p.read : typeof p.rows === 'number' ? p.rows : 0;
    const unit = typeof p.read === 'number' ? 'objects' : 'rows';
    if (this.io.stderr.isTTY) {
      if (!this.bar) {
        this.bar = new cliProgress.SingleBar({
          stream: this.io.stderr as NodeJS.WritableStream as never,
          format: total !== undefined ? `{status} [{bar}] {value}/{total} ${unit}` : `{status} {value} ${unit}`,
          hideCursor: true,
        }, cliProgress.Presets.shades_classic);
        this.bar.start(total ?? 0, done, { status: state.status });
      }
      if (total !== undefined) this.bar.setTotal(total);
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
  for (const m of state.messages ?? []) io.stderr.write(`  ${m}\n`);
  const logs = unwrap(await c.client.GET('/api/{db}/jobs/{job}/logs', { params: { path: { db: c.db, job: id } } }) as never) as { data?: unknown[] };
  for (const entry of logs.data ?? []) io.stderr.write(`  ${typeof entry === 'string' ? entry : JSON.stringify(entry)}\n`);
}

/** Streams a completed job's result to a file or stdout. */
async function saveResult(c: Connection, id: string, out: string | undefined, io: CliIo) {
  const answer = await c.client.GET('/api/{db}/jobs/{job}/download', { params: { path: { db: c.db, job: id } }, parseAs: 'stream' });
  if (!answer.response.ok || !answer.response.body) {
    const text = await answer.response.text().catch(() => '');
    let message = text;
    try { message = JSON.parse(text).message ?? text; } catch { /* not JSON */ }
    throw new Refused(answer.response.status, message || answer.response.statusText);
  }
  const target = out && out !== '-' ? createWriteStream(out) : io.stdout;
  await pipeline(Readable.fromWeb(answer.response.body as never), target as Writable, { end: target !== io.stdout });
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
    .description('Command-line tool of the metadata service: queries and jobs.')
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
      for (const entry of logs.data ?? []) io.stdout.write(`${typeof entry === 'string' ? entry : JSON.stringify(entry)}\n`);
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
