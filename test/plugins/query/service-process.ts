/**
 * The service as a process of its own (`runtime/main.ts`), for the tests
 * that need an instance to die the way a crashed one does: SIGKILL, with no
 * chance to clean up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ADMIN, basic } from '../../helpers/service.ts';
import { HEAP_FLAGS } from '../../../runtime/heap.ts';

export interface ServiceProcess {
  url: string;
  request(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  kill(): Promise<void>;
}

const root = fileURLToPath(new URL('../../../', import.meta.url));

export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const child: ChildProcess = spawn(process.execPath, [...HEAP_FLAGS, '--import', 'tsx', 'runtime/main.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', HOST: '127.0.0.1',
      SERVICE_ADMIN_USER: ADMIN.loginId, SERVICE_ADMIN_PASSWORD: ADMIN.password, ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service process did not start:\n${output.join('')}`)), 60_000);
    child.stderr!.on('data', (d) => output.push(String(d)));
    child.stdout!.on('data', (d) => {
      output.push(String(d));
      for (const line of String(d).split('\n')) {
        if (!line.includes('service listening')) continue;
        clearTimeout(timer);
        resolve(JSON.parse(line).port);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the service process exited (${code}):\n${output.join('')}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    request(path, init = {}) {
      const headers = new Headers(init.headers);
      headers.set('authorization', basic(ADMIN.loginId, ADMIN.password));
      if (init.json !== undefined) headers.set('content-type', 'application/json');
      return fetch(`${url}${path}`, { ...init, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body });
    },
    async kill() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}
