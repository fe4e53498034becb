/**
 * Requests as a reverse proxy in front of the service sends them: no
 * credentials, the login ID (and more) in configured headers. The header
 * names here are chosen by the tests, as an operator would choose them.
 */
import { expect } from 'chai';
import net from 'node:net';
import { uniqueName, type TestService } from '../../helpers/service.ts';

export const USER_HEADER = 'X-Remote-User';

export const PREAUTH_ENV = {
  SERVICE_PRE_AUTHENTICATION: 'true',
  SERVICE_REMOTE_USER_ID: USER_HEADER,
};

/** Request options of a proxied caller: no Authorization, the login ID in the user header. */
export function proxied(loginId: string | undefined, headers: Record<string, string> = {}, init: RequestInit & { json?: unknown } = {}) {
  return { ...init, auth: null, headers: { ...(loginId === undefined ? {} : { [USER_HEADER]: loginId }), ...headers } };
}

export async function createDatabaseAs(t: TestService, loginId: string, name = uniqueName()): Promise<string> {
  const r = await t.request('/api/admin/databases', proxied(loginId, {}, { method: 'POST', json: { name } }));
  if (r.status !== 201) throw new Error(`creating database ${name}: ${r.status} ${await r.text()}`);
  return name;
}

export async function createTenantAs(t: TestService, db: string, loginId: string, label: string): Promise<Record<string, unknown>> {
  const r = await t.request(`/rest/${db}/tenants`, proxied(loginId, {}, { method: 'POST', json: { _type: 'Tenant', label } }));
  if (r.status !== 201) throw new Error(`creating tenant ${label}: ${r.status} ${await r.text()}`);
  return r.json();
}

export interface ProxiedUser {
  loginId: string;
  accessLevel?: 'READ_ONLY' | 'EDITOR' | 'ADMINISTRATOR';
  defaultTenant?: boolean;
  tenant?: string;
}

/** Creates a user (no password: none is kept with pre-authentication) as `creator`, in `tenant` if given. */
export async function createUserAs(t: TestService, db: string, creator: string, spec: ProxiedUser): Promise<Record<string, unknown>> {
  const { tenant, ...body } = spec;
  const r = await t.request(`/rest/${db}/users`, proxied(creator, tenant ? { 'service-tenant': tenant } : {}, {
    method: 'POST', json: { _type: 'User', accessLevel: 'READ_ONLY', ...body },
  }));
  if (r.status !== 201) throw new Error(`creating user ${spec.loginId}: ${r.status} ${await r.text()}`);
  return r.json();
}

export interface Session {
  loginId: string;
  tenant: string;
  tenantLabel: string;
  accessLevel: string;
  systemAdmin: boolean;
  method: string;
  logoutUrl?: string;
}

/** The session endpoint as the caller sees it; fails the test on anything but 200. */
export async function sessionOf(t: TestService, db: string, loginId: string | undefined, headers: Record<string, string> = {}): Promise<Session> {
  const r = await t.request(`/api/${db}/session`, proxied(loginId, headers));
  expect(r.status, `session of ${loginId}: ${r.status}`).to.equal(200);
  return r.json();
}

/**
 * A request written byte by byte, for what fetch will not send: a header
 * twice, raw bytes above 0x7f, control characters. `headers` are Latin-1
 * strings: one character per byte on the wire.
 */
export function rawRequest(url: string, path: string, headers: [string, string][]): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  const prefix = new URL(url).pathname.replace(/\/$/, '');
  const head = [`GET ${prefix}${path} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close', ...headers.map(([n, v]) => `${n}: ${v}`)];
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1')));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
  });
}

/** The UTF-8 bytes of a text, as the Latin-1 string Node's HTTP stack writes byte for byte. */
export function utf8Bytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

/** An unsigned JWT (`alg: none`), as an authentication module might inject one; its signature is never checked. */
export function unsignedJwt(claims: Record<string, unknown>): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o), 'utf8').toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}
