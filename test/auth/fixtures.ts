/**
 * Users and tenants for the authentication tests, made through the REST
 * interface as a client would make them. Every password a test uses goes
 * through here or `secret()`, so that a test can check none reached the log.
 */
import { expect } from 'chai';
import { ADMIN, basic, logLines, type TestService } from '../helpers/service.ts';
import { rememberSecret } from '../helpers/secrets.ts';

export type Credentials = { loginId: string; password: string };

export interface UserSpec {
  loginId: string;
  password?: string;
  accessLevel?: 'READ_ONLY' | 'EDITOR' | 'ADMINISTRATOR';
  defaultTenant?: boolean;
  /** Label of the tenant to create the user in (sent as `service-tenant`); the login tenant if absent. */
  tenant?: string;
}

const usedSecrets = new Set<string>([ADMIN.password]);

/** A password for a test, remembered for the log check. */
export function secret(text: string): string {
  usedSecrets.add(text);
  return rememberSecret(text, 'password');
}

export function inTenant(label: string | undefined): Record<string, string> {
  return label === undefined ? {} : { 'service-tenant': label };
}

export async function createUser(t: TestService, db: string, spec: UserSpec, as: Credentials = ADMIN): Promise<Record<string, unknown>> {
  const { tenant, ...body } = spec;
  if (body.password !== undefined) secret(body.password);
  const r = await t.request(`/rest/${db}/users`, { method: 'POST', auth: as, headers: inTenant(tenant), json: { _type: 'User', accessLevel: 'READ_ONLY', ...body } });
  if (r.status !== 201) throw new Error(`creating user ${spec.loginId}: ${r.status} ${await r.text()}`);
  return r.json();
}

export async function createTenant(t: TestService, db: string, label: string): Promise<Record<string, unknown>> {
  const r = await t.request(`/rest/${db}/tenants`, { method: 'POST', json: { _type: 'Tenant', label } });
  if (r.status !== 201) throw new Error(`creating tenant ${label}: ${r.status} ${await r.text()}`);
  return r.json();
}

export async function tenantByLabel(t: TestService, db: string, label: string): Promise<Record<string, unknown>> {
  const r = await t.request(`/rest/${db}/tenants/${encodeURIComponent(label)}`);
  expect(r.status).to.equal(200);
  return r.json();
}

/** The stored credential of a user, read past the service. */
export async function storedCredential(t: TestService, db: string, userId: string): Promise<{ hash: string; pepper_id: string | null } | undefined> {
  const r = await t.service.storage.knex.raw(`select hash, pepper_id from "db_${db}".credentials where user_id = ?`, [userId]);
  return r.rows[0];
}

/** Fails naming the first secret (or its basic-authentication form) found in any log line. */
export function expectNoSecretInLog(credentials: Credentials[] = []) {
  const needles = [...usedSecrets, ...credentials.map((c) => basic(c.loginId, c.password).slice('Basic '.length))];
  for (const needle of needles) {
    const line = logLines.find((l) => l.includes(needle) || l.includes(JSON.stringify(needle).slice(1, -1)));
    expect(line, `a log line holds ${JSON.stringify(needle)}`).to.equal(undefined);
  }
}
