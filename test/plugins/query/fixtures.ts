/**
 * A database for the query interface tests, filled through the REST
 * interface as a client would fill it: two tenants with a scheme each, a
 * tenant administrator, an editor and a read-only user in the default tenant.
 */
import { expect } from 'chai';
import { createDatabase, type TestService } from '../../helpers/service.ts';
import { createTenant, createUser, inTenant, secret, type Credentials } from '../../auth/fixtures.ts';

export type Json = Record<string, any>;

export interface QueryFixture {
  db: string;
  admin: Credentials;
  editor: Credentials;
  reader: Credentials;
  /** An administrator of the other tenant. */
  otherAdmin: Credentials;
  scheme: Json;
  otherScheme: Json;
  defaultTenant: string;
  otherTenant: string;
}

export async function rest(t: TestService, method: string, path: string, json?: unknown, headers: Record<string, string> = {}, status?: number): Promise<Json> {
  const r = await t.request(path, { method, json, headers });
  const text = await r.text();
  if (status !== undefined) expect(r.status, text).to.equal(status);
  else expect(r.status, text).to.be.within(200, 299);
  return text ? JSON.parse(text) : {};
}

export async function queryFixture(t: TestService): Promise<QueryFixture> {
  const db = await createDatabase(t);
  const admin = { loginId: 'ada', password: secret('ada-Passwort-1') };
  const editor = { loginId: 'eddie', password: secret('eddie-Passwort-1') };
  const reader = { loginId: 'rita', password: secret('rita-Passwort-1') };
  const otherAdmin = { loginId: 'otto', password: secret('otto-Passwort-1') };
  await createUser(t, db, { ...admin, accessLevel: 'ADMINISTRATOR' });
  await createUser(t, db, { ...editor, accessLevel: 'EDITOR' });
  await createUser(t, db, { ...reader, accessLevel: 'READ_ONLY' });
  const other = await createTenant(t, db, 'Other');
  await createUser(t, db, { ...otherAdmin, accessLevel: 'ADMINISTRATOR', tenant: 'Other' });
  const scheme = await rest(t, 'POST', `/rest/${db}/schemes`, { _type: 'Scheme', label: 'Orders', description: 'Line one,\n"quoted"' });
  await rest(t, 'POST', `/rest/${db}/schemes/Orders/classifiers`, { _type: 'Classifier', label: 'Customer' });
  const otherScheme = await rest(t, 'POST', `/rest/${db}/schemes`, { _type: 'Scheme', label: 'Secret' }, inTenant('Other'));
  const defaultTenant = (await t.service.databases.get(db))!.defaultTenant;
  return { db, admin, editor, reader, otherAdmin, scheme, otherScheme, defaultTenant, otherTenant: other.id as string };
}

export interface QueryOptions {
  method?: 'PUT' | 'POST';
  format?: string;
  params?: Record<string, string>;
  headers?: Record<string, string>;
  auth?: Credentials | null;
  body?: unknown;
}

/** Calls /api/<db>/queries/download with the statement. */
export function runQuery(t: TestService, db: string, sql: string, options: QueryOptions = {}): Promise<Response> {
  const params = new URLSearchParams({ ...(options.format ? { format: options.format } : {}), ...options.params });
  const query = params.size ? `?${params}` : '';
  return t.request(`/api/${db}/queries/download${query}`, {
    method: options.method ?? 'PUT', json: options.body ?? { sql }, headers: options.headers, auth: options.auth,
  });
}

/** The rows of a JSON result; fails with the answer when it is not 200. */
export async function rows(t: TestService, db: string, sql: string, options: QueryOptions = {}): Promise<Json[]> {
  const r = await runQuery(t, db, sql, { ...options, format: 'JSON' });
  const text = await r.text();
  expect(r.status, text).to.equal(200);
  return JSON.parse(text);
}

/**
 * A statement refused: 400 with a message and, where the parser or the
 * database gives one, the position within the statement sent (1-based, in
 * characters, at most one past its end); returns the message.
 */
export async function refused(t: TestService, db: string, sql: string, options: QueryOptions = {}): Promise<string> {
  return (await refusal(t, db, sql, options)).message;
}

/** A statement refused: its message and position (undefined where the answer has none). */
export async function refusal(t: TestService, db: string, sql: string, options: QueryOptions = {}): Promise<{ message: string; position?: number }> {
  const r = await runQuery(t, db, sql, options);
  const text = await r.text();
  expect(r.status, `${sql}\n→ ${text}`).to.equal(400);
  const body = JSON.parse(text);
  expect(Object.keys(body).sort().join(), text).to.be.oneOf(['message', 'message,position']);
  expect(body.message).to.be.a('string').and.not.equal('');
  if ('position' in body) expect(body.position, text).to.be.a('number').and.satisfy(Number.isInteger).and.within(1, Array.from(sql).length + 1);
  return body;
}

/** Waits until a job has finished; its statistics. */
export async function finished(t: TestService, db: string, id: string, auth?: Credentials, timeoutMs = 30_000): Promise<Json> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await t.request(`/api/${db}/jobs/${id}/statistics`, { auth });
    const body = await r.json();
    if (r.status === 200) return body;
    expect(r.status, JSON.stringify(body)).to.equal(202);
    if (Date.now() > until) throw new Error(`job ${id} still ${body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A statement that runs for a while without sleeping (pg_sleep is refused):
 * counts through a recursive query. `n` = 3,000,000 takes about a second on
 * PostgreSQL and longer embedded.
 */
export const slowStatement = (n = 50_000_000) =>
  `with recursive r(n) as (select 1 union all select n + 1 from r where n < ${n}) select count(*) as c from r`;
