/**
 * Runs the benchmarks' client processes (curl, psql) on behalf of a parent
 * that hosts the service: spawning from the service's process would charge
 * it with the fork of a large process and with reading the output. Each
 * message is one run, answered with its time and the bytes written to
 * stdout, which are counted by `wc -c`, not read by node.
 */
import { spawn } from 'node:child_process';

/** `nice`: the client runs at the lowest priority, standing in for a client on another machine. */
export interface ProcessRun { id: number; command: string; argv: string[]; input?: string; nice?: boolean }
export interface ProcessRunResult { id: number; seconds?: number; bytes?: number; error?: string }

function run({ id, command, argv, input, nice }: ProcessRun): Promise<ProcessRunResult> {
  return new Promise((resolve) => {
    const started = performance.now();
    const script = ['-c', 'set -o pipefail; "$@" | wc -c', 'bash', command, ...argv];
    const child = spawn(nice ? 'nice' : 'bash', nice ? ['-n', '19', 'bash', ...script] : script, {
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let counted = '';
    let errors = '';
    child.stdout!.on('data', (d: Buffer) => { counted += String(d); });
    child.stderr!.on('data', (d: Buffer) => { errors += String(d); });
    if (input !== undefined) child.stdin!.end(input);
    child.on('error', (err) => resolve({ id, error: String(err) }));
    child.on('close', (code) => {
      if (code !== 0) resolve({ id, error: `${command} exited ${code}: ${errors}` });
      else resolve({ id, seconds: (performance.now() - started) / 1000, bytes: Number(counted.trim()) });
    });
  });
}

process.on('message', async (message: ProcessRun) => {
  process.send!(await run(message));
});
