/**
 * Starts the real service on a real port for a test, against the storage the
 * suite runs on: PostgreSQL when TEST_DATABASE_URL is set (the root hook
 * creates a throwaway database there), otherwise an in-memory PGlite.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { loadConfig } from '../../runtime/config.ts';
import { createService, type Service } from '../../runtime/app.ts';
import { PLUGINS } from '../../plugins/index.ts';
import type { PluginManifest } from '../../runtime/plugins.ts';
import { rememberHeaderSecrets, rememberSecret, rememberSettingSecrets } from './secrets.ts';

export const ADMIN = { loginId: 'admin', password: 'admin-secret-1' };

/** Every log line of every test service, so that a test can look for secrets in it. */
export const logLines: string[] = [];

export interface TestService {
  url: string;
  service: Service;
  /** fetch relative to the service, with JSON handling and basic authentication by default. */
  request(path: string, init?: RequestInit & { json?: unknown; auth?: { loginId: string; password: string } | null }): Promise<Response>;
  close(): Promise<void>;
}

export function storageEnv(): Record<string, string> {
  const url = process.env.SERVICE_TEST_DATABASE_URL;
  return url ? { SERVICE_DATABASE_URL: url } : { SERVICE_DATA_DIR: 'memory://' };
}

export function basic(loginId: string, password: string): string {
  return `Basic ${Buffer.from(`${loginId}:${password}`, 'utf8').toString('base64')}`;
}

/** `options.plugins`: extra plugins (e.g. a test-only driver) besides every shipped one; `options.without`: shipped plugins left out, by name. */
export async function startService(env: Record<string, string | undefined> = {}, options: { plugins?: PluginManifest[]; without?: string[] } = {}): Promise<TestService> {
  rememberSettingSecrets(env);
  const config = loadConfig({
    PORT: '0',
    SERVICE_ADMIN_USER: ADMIN.loginId,
    SERVICE_ADMIN_PASSWORD: ADMIN.password,
    SERVICE_LOG_LEVEL: 'info',
    ...storageEnv(),
    ...env,
  });
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const service = await createService(config, { plugins: [...PLUGINS.filter((p) => !options.without?.includes(p.name)), ...(options.plugins ?? [])], log: pino({ level: config.logLevel }, sink) });
  const port = await service.listen();
  // On PostgreSQL every test service of a run shares the control schema: each starts, as on the embedded database,
  // with no system administrator's subject identifier pinned by an earlier one.
  await service.storage.knex.raw('delete from service.admin_subjects');
  const url = `http://127.0.0.1:${port}${config.contextPath}`;
  return {
    url,
    service,
    async request(path, init = {}) {
      const headers = new Headers(init.headers);
      const auth = init.auth === undefined ? ADMIN : init.auth;
      if (auth && !headers.has('authorization')) headers.set('authorization', basic(auth.loginId, auth.password));
      let body = init.body;
      if (init.json !== undefined) {
        body = JSON.stringify(init.json);
        if (!headers.has('content-type')) headers.set('content-type', 'application/json');
      }
      rememberHeaderSecrets(headers);
      const response = await fetch(`${url}${path}`, { ...init, headers, body });
      // An access key is shown once, in the answer that creates it.
      if (response.status === 201 && /\/accessKeys$/.test(path.split('?')[0])) {
        const created = await response.clone().json().catch(() => ({}));
        if (typeof created.key === 'string') rememberSecret(created.key, 'access key');
      }
      return response;
    },
    close: () => service.close(),
  };
}

export function uniqueName(prefix = 'db'): string {
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}

/** Creates a database through the admin interface and returns its name. */
export async function createDatabase(t: TestService, name = uniqueName()): Promise<string> {
  const r = await t.request('/api/admin/databases', { method: 'POST', json: { name } });
  if (r.status !== 201) throw new Error(`creating database ${name}: ${r.status} ${await r.text()}`);
  return name;
}
