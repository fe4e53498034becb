/**
 * The directory the sign-in tests run against: a real slapd with people
 * whose login IDs are ordinary, have umlauts, or hold the characters of the
 * LDAP filter syntax; one login ID that two entries share; and the settings
 * that point the service at it. Every password goes through `secret()`, so
 * the log check knows them.
 */
import { expect } from 'chai';
import { secret } from '../../auth/fixtures.ts';
import { PERSON_ATTRIBUTES, Slapd, type Person } from '../../helpers/slapd.ts';
import { uniqueName, type TestService } from '../../helpers/service.ts';

function person(p: Person): Person {
  secret(p.password);
  return p;
}

export const PEOPLE = {
  // The system administrator (SERVICE_ADMIN_USER=admin), with a directory password unlike the service's own ADMIN.password.
  admin: person({ uid: 'admin', password: 'directory-Admin-1', cn: 'Ada Admin', sn: 'Admin', givenName: 'Ada' }),
  alice: person({
    uid: 'alice', password: 'alices-Directory-1', cn: 'Alice Liddell', sn: 'Liddell', givenName: 'Alice',
    groups: ['analysts', 'editors'], tenantId: 'T-4711',
  }),
  bob: person({ uid: 'bob', password: 'bobs-Directory-1', cn: 'Bob Builder', sn: 'Builder', givenName: 'Bob', groups: ['readers'] }),
  carol: person({ uid: 'carol', password: 'carols-Directory-1', cn: 'Carol Noone', sn: 'Noone' }),
  dora: person({ uid: 'dora', password: 'doras-Directory-1', cn: 'Dora Explorer', sn: 'Explorer', tenantName: 'Research' }),
  juergen: person({ uid: 'jürgen.müller', password: 'jürgens-Kennwort-1', cn: 'Jürgen Müller', sn: 'Müller', givenName: 'Jürgen', tenantId: 'Zürich' }),
  parens: person({ uid: 'r2(d2)', password: 'r2d2s-Directory-1', cn: 'R2 D2', sn: 'D2' }),
  star: person({ uid: 'star*', password: 'stars-Directory-1', cn: 'Star Ling', sn: 'Ling' }),
  backslash: person({ uid: 'dom\\user', password: 'doms-Directory-1', cn: 'Dom User', sn: 'User' }),
  plain: person({ uid: 'eve', password: 'eves-Directory-1', cn: 'Eve Plain', sn: 'Plain', passwordScheme: 'plain' }),
  // No users of the service: access rules of the tenant `Guests`, which their `o` makes their default tenant, decide.
  gina: person({ uid: 'gina', password: 'ginas-Directory-1', cn: 'Gina Guest', sn: 'Guest', groups: ['visitors', 'analysts'], tenantName: 'Guests' }),
  hank: person({ uid: 'hank', password: 'hanks-Directory-1', cn: 'Hank Outsider', sn: 'Outsider', groups: ['outsiders'], tenantName: 'Guests' }),
  ida: person({ uid: 'ida', password: 'idas-Directory-1', cn: 'Ida Sommer', sn: 'Sommer', givenName: 'Ida', tenantId: 'T-0815', tenantName: 'Guests' }),
  twinPeople: person({ uid: 'twin', password: 'twins-Directory-1', cn: 'Twin One', sn: 'One' }),
  twinContractors: person({ uid: 'twin', password: 'twins-Directory-1', cn: 'Twin Two', sn: 'Two', ou: 'contractors' }),
} satisfies Record<string, Person>;

export type Credentials = { loginId: string; password: string };

export function credentials(p: Person): Credentials {
  return { loginId: p.uid, password: p.password };
}

/** A slapd with every one of PEOPLE. */
export async function startDirectory(): Promise<Slapd> {
  const slapd = await Slapd.start();
  try {
    for (const p of Object.values(PEOPLE)) await slapd.addPerson(p);
    return slapd;
  } catch (err) {
    await slapd.close();
    throw err;
  }
}

/** The service's settings for directory sign-in against `slapd`, attributes mapped as PERSON_ATTRIBUTES says. */
export function directoryEnv(slapd: Slapd, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SERVICE_JNDI_AUTHENTICATION: 'true',
    SERVICE_JNDI_URL: slapd.url,
    SERVICE_JNDI_USER: slapd.searchDn,
    SERVICE_JNDI_PASSWORD: secret(slapd.searchPassword),
    SERVICE_JNDI_CONTEXT: slapd.suffix,
    ...PERSON_ATTRIBUTES,
    ...extra,
  };
}

export async function createDatabaseAs(t: TestService, as: Credentials, name = uniqueName()): Promise<string> {
  const r = await t.request('/api/admin/databases', { method: 'POST', auth: as, json: { name } });
  if (r.status !== 201) throw new Error(`creating database ${name}: ${r.status} ${await r.text()}`);
  return name;
}

export async function createTenantAs(t: TestService, db: string, as: Credentials, label: string): Promise<Record<string, unknown>> {
  const r = await t.request(`/rest/${db}/tenants`, { method: 'POST', auth: as, json: { _type: 'Tenant', label } });
  if (r.status !== 201) throw new Error(`creating tenant ${label}: ${r.status} ${await r.text()}`);
  return r.json();
}

export interface Session {
  loginId: string;
  tenant: string;
  tenantLabel: string;
  accessLevel: string;
  systemAdmin: boolean;
  method: string;
}

export async function sessionOf(t: TestService, db: string, as: Credentials, headers: Record<string, string> = {}): Promise<Session> {
  const r = await t.request(`/api/${db}/session`, { auth: as, headers });
  expect(r.status, `session of ${as.loginId}: ${r.status} ${r.status === 200 ? '' : await r.clone().text()}`).to.equal(200);
  return r.json();
}
