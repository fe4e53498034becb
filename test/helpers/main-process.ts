/** runtime/main.ts in a process of its own, as `npm start` runs it when the flags are HEAP_FLAGS. */
import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { storageEnv } from './service.ts';

export { freePort } from './ports.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

export interface MainProcess {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Standard error, and standard output unless `stdout` was given. */
  output(): string;
}

export interface MainOptions {
  env?: Record<string, string>;
  /** A file descriptor for the process's standard output (e.g. a pipe's end); default: a pipe this process reads. */
  stdout?: number;
}

export function startMain(flags: readonly string[], port: number, options: MainOptions = {}): Promise<MainProcess> {
  return start(process.execPath, [...flags, '--import', 'tsx', 'runtime/main.ts'], port, options);
}

/** `npm start` itself: the child is npm. */
export function startNpmStart(port: number, options: MainOptions = {}): Promise<MainProcess> {
  return start('npm', ['start'], port, options);
}

async function start(command: string, args: string[], port: number, options: MainOptions): Promise<MainProcess> {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...storageEnv(), PORT: String(port), SERVICE_ADMIN_USER: 'admin', SERVICE_ADMIN_PASSWORD: 'admin-secret-1', ...options.env },
    stdio: ['ignore', options.stdout ?? 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  // The embedded database takes a while to start on a busy machine.
  const ready = async () => (child.stdout ? output.includes('service listening') : await answers(port));
  for (let i = 0; i < 600 && !await ready(); i++) await new Promise((r) => setTimeout(r, 200));
  expect(await ready(), output).to.equal(true);
  return { child, exited, output: () => output };
}

async function answers(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/health`)).status === 200;
  } catch {
    return false;
  }
}

/** What became of the process within `ms`: its exit, or undefined while it still runs. */
export function exitWithin(main: MainProcess, ms: number) {
  return Promise.race([main.exited, new Promise<undefined>((resolve) => setTimeout(resolve, ms))]);
}
