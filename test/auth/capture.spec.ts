/**
 * Login-tenant capture, from the attacker's side (decisions 7.6): the
 * administrator of tenant "Aardvark" tries to make a person of tenant
 * "Victims" sign in to Aardvark, by a user with the victim's login ID marked
 * `defaultTenant` (login-tenant rule 3), or unmarked (rule 5: the victim has
 * no user in the default tenant, and "Aardvark" sorts first), created or
 * made by renaming. Every way is refused, and the victim keeps signing in
 * to Victims, by password, pre-authentication and directory sign-in alike.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ADMIN, startService, uniqueName, type TestService } from '../helpers/service.ts';
import type { Slapd } from '../helpers/slapd.ts';
import { createUser, expectNoSecretInLog, inTenant, secret } from './fixtures.ts';
import { PREAUTH_ENV, proxied } from '../plugins/auth-preauth/helpers.ts';
import { credentials, directoryEnv, PEOPLE, startDirectory } from '../plugins/auth-ldap/people.ts';

type Init = RequestInit & { json?: unknown; auth?: { loginId: string; password: string } | null };

interface Scene {
  t: TestService;
  db: string;
  victim: string;
  /** Request options that sign in as the system administrator, the attacker (Aardvark's administrator) or the victim. */
  as: Record<'admin' | 'attacker' | 'victim', (init?: Init) => Init>;
}

/** The tenants and users of the scene, made by the system administrator; `extra` adds to a user's payload (a password). */
async function setUp(t: TestService, as: Scene['as'], victim: string, attacker: string, extra: Record<string, Record<string, unknown>> = {}): Promise<string> {
  const created = async (path: string, json: Record<string, unknown>, tenant?: string) => {
    const r = await t.request(path, as.admin({ method: 'POST', json, headers: inTenant(tenant) }));
    expect(r.status, `${path}: ${await r.clone().text()}`).to.equal(201);
  };
  const db = uniqueName();
  await created('/api/admin/databases', { name: db });
  for (const label of ['Aardvark', 'Victims']) await created(`/rest/${db}/tenants`, { _type: 'Tenant', label });
  const users: [string, string, string][] = [[victim, 'EDITOR', 'Victims'], [attacker, 'ADMINISTRATOR', 'Aardvark'], [`${attacker}-helper`, 'READ_ONLY', 'Aardvark']];
  for (const [loginId, accessLevel, tenant] of users) {
    await created(`/rest/${db}/users`, { _type: 'User', loginId, accessLevel, ...extra[loginId] }, tenant);
  }
  return db;
}

function refusesCapture(scene: () => Scene) {
  const users = (s: Scene, tenant: string) => s.t.request(`/rest/${s.db}/users`, s.as.admin({ headers: inTenant(tenant) }));
  async function loginIdsIn(s: Scene, tenant: string): Promise<string[]> {
    return (await (await users(s, tenant)).json())._embedded.users.map((u: { loginId: string }) => u.loginId).sort();
  }
  async function expectRefused(r: Response, paths: string[]) {
    const body = await r.json();
    expect(r.status, JSON.stringify(body)).to.equal(403);
    expect(body.violations.map((v: { path: string }) => v.path)).to.deep.equal(paths);
  }
  async function expectVictimSignsInToVictims(s: Scene) {
    const session = await s.t.request(`/api/${s.db}/session`, s.as.victim());
    expect(session.status).to.equal(200);
    expect((await session.json()).tenantLabel).to.equal('Victims');
    // The victim's next write lands in the victim's own tenant, where the attacker cannot read it.
    const written = await s.t.request(`/rest/${s.db}/schemes`, s.as.victim({ method: 'POST', json: { _type: 'Scheme', label: `Notes ${randomUUID()}` } }));
    expect(written.status).to.equal(201);
    const read = await s.t.request(`/rest/${s.db}/schemes/${(await written.json()).id}`, s.as.attacker());
    expect(read.status).to.equal(404);
  }

  it('refuses (403) a user with the victim\'s login ID marked defaultTenant, and one unmarked (rule 5)', async () => {
    const s = scene();
    const post = (json: Record<string, unknown>) => s.t.request(`/rest/${s.db}/users`, s.as.attacker({ method: 'POST', json: { _type: 'User', accessLevel: 'ADMINISTRATOR', ...json } }));
    await expectRefused(await post({ loginId: s.victim, defaultTenant: true }), ['defaultTenant', 'loginId']);
    await expectRefused(await post({ loginId: s.victim }), ['loginId']);
    await expectRefused(await s.t.request(`/rest/${s.db}/users`, s.as.attacker({ method: 'PATCH', json: [{ _type: 'User', loginId: s.victim }] })), ['0.loginId']);
    expect(await loginIdsIn(s, 'Aardvark')).to.not.include(s.victim);
    await expectVictimSignsInToVictims(s);
  });

  it('refuses (403) renaming a user of the attacker\'s tenant to the victim\'s login ID, by PATCH, PUT and list PUT', async () => {
    const s = scene();
    const [helper] = (await (await users(s, 'Aardvark')).json())._embedded.users.filter((u: { loginId: string }) => u.loginId.endsWith('-helper'));
    const self = `/rest/${s.db}/users/${helper.id}`;
    await expectRefused(await s.t.request(self, s.as.attacker({ method: 'PATCH', json: { loginId: s.victim } })), ['loginId']);
    await expectRefused(await s.t.request(self, s.as.attacker({ method: 'PUT', json: { _type: 'User', loginId: s.victim, label: helper.label } })), ['loginId']);
    const all = (await (await s.t.request(`/rest/${s.db}/users`, s.as.attacker())).json())._embedded.users;
    const renamed = all.map((u: { id: string }) => (u.id === helper.id ? { ...u, loginId: s.victim } : u));
    await expectRefused(await s.t.request(`/rest/${s.db}/users`, s.as.attacker({ method: 'PUT', json: renamed })), [`${renamed.findIndex((u: { id: string }) => u.id === helper.id)}.loginId`]);
    expect(await loginIdsIn(s, 'Aardvark')).to.not.include(s.victim);
    await expectVictimSignsInToVictims(s);
  });

  it('refuses (403) marking or unmarking any user defaultTenant, even one of the attacker\'s own', async () => {
    const s = scene();
    const [helper] = (await (await users(s, 'Aardvark')).json())._embedded.users.filter((u: { loginId: string }) => u.loginId.endsWith('-helper'));
    await expectRefused(await s.t.request(`/rest/${s.db}/users/${helper.id}`, s.as.attacker({ method: 'PATCH', json: { defaultTenant: true } })), ['defaultTenant']);
    // Marked by the system administrator, the mark stays when the attacker writes the user back, and cannot be taken off.
    const marked = await s.t.request(`/rest/${s.db}/users/${helper.id}`, s.as.admin({ method: 'PATCH', headers: inTenant('Aardvark'), json: { defaultTenant: true } }));
    expect(marked.status, await marked.clone().text()).to.equal(200);
    const read = await (await s.t.request(`/rest/${s.db}/users/${helper.id}`, s.as.attacker())).json();
    const back = await s.t.request(`/rest/${s.db}/users/${helper.id}`, s.as.attacker({ method: 'PUT', json: { ...read, title: 'Helper' } }));
    expect(back.status, await back.clone().text()).to.equal(200);
    await expectRefused(await s.t.request(`/rest/${s.db}/users/${helper.id}`, s.as.attacker({ method: 'PATCH', json: { defaultTenant: false } })), ['defaultTenant']);
  });

  it('lets the system administrator do both: the victim then signs in to Aardvark, as that administrator decided', async () => {
    const s = scene();
    const r = await s.t.request(`/rest/${s.db}/users`, s.as.admin({ method: 'POST', headers: inTenant('Aardvark'), json: { _type: 'User', loginId: s.victim, defaultTenant: true } }));
    expect(r.status).to.equal(201);
    const session = await s.t.request(`/api/${s.db}/session`, s.as.victim());
    // With a password, the victim's password is that of the user in Victims, which does not sign in to Aardvark: 401.
    if (session.status === 200) expect((await session.json()).tenantLabel).to.equal('Aardvark');
    else expect(session.status).to.equal(401);
    const removed = await s.t.request(`/rest/${s.db}/users/${(await r.json()).id}`, s.as.admin({ method: 'DELETE', headers: inTenant('Aardvark') }));
    expect(removed.status).to.equal(204);
    await expectVictimSignsInToVictims(s);
  });
}

describe('login-tenant capture: password sign-in', () => {
  const victim = { loginId: 'vic', password: secret('vics-Passwort-1') };
  const attacker = { loginId: 'mallory', password: secret('mallorys-Passwort-1') };
  let scene: Scene;

  before(async () => {
    const t = await startService();
    const with_ = (auth: { loginId: string; password: string }) => (init: Init = {}) => ({ ...init, auth });
    const as = { admin: with_(ADMIN), attacker: with_(attacker), victim: with_(victim) };
    const passwords = { [victim.loginId]: { password: victim.password }, [attacker.loginId]: { password: attacker.password } };
    scene = { t, db: await setUp(t, as, victim.loginId, attacker.loginId, passwords), victim: victim.loginId, as };
  });
  after(() => scene?.t.close());

  refusesCapture(() => scene);

  describe('login IDs unique within a tenant', () => {
    const post = (json: Record<string, unknown>, tenant = 'Victims') => scene.t.request(`/rest/${scene.db}/users`, { method: 'POST', headers: inTenant(tenant), json: { _type: 'User', ...json } });
    async function expectTaken(r: Response, path: string, action: 'created' | 'changed') {
      const body = await r.json();
      expect(r.status, JSON.stringify(body)).to.equal(409);
      expect(body.message).to.equal(`The User cannot be ${action}: the login ID is already taken.`);
      expect(body.violations).to.deep.equal([{ path, message: 'Another user of this tenant has this login ID.' }]);
    }

    it('refuses (409) a second user with a login ID of the tenant, under another label too, even to the system administrator', async () => {
      await expectTaken(await post({ loginId: 'vic', label: 'vic (2)' }), 'loginId', 'created');
      const attacker = await scene.t.request(`/rest/${scene.db}/users`, scene.as.attacker({ method: 'POST', json: { _type: 'User', loginId: 'mallory-helper', label: 'second helper' } }));
      await expectTaken(attacker, 'loginId', 'created');
    });

    it('refuses (409) renaming a user to a login ID of the tenant, by PATCH and list PATCH, and keeps the real one signing in', async () => {
      const other = await createUser(scene.t, scene.db, { loginId: 'vic-colleague', tenant: 'Victims' });
      await expectTaken(await scene.t.request(`/rest/${scene.db}/users/${other.id}`, { method: 'PATCH', headers: inTenant('Victims'), json: { loginId: 'vic' } }), 'loginId', 'changed');
      await expectTaken(await scene.t.request(`/rest/${scene.db}/users`, { method: 'PATCH', headers: inTenant('Victims'), json: [{ id: other.id, loginId: 'vic' }] }), '0.loginId', 'changed');
      expect((await scene.t.request(`/api/${scene.db}/session`, scene.as.victim())).status).to.equal(200);
    });

    it('lets two users of one list swap their login IDs, and refuses two new ones sharing one', async () => {
      const a = await createUser(scene.t, scene.db, { loginId: 'swap-a', tenant: 'Victims' });
      const b = await createUser(scene.t, scene.db, { loginId: 'swap-b', tenant: 'Victims' });
      const swapped = await scene.t.request(`/rest/${scene.db}/users`, { method: 'PATCH', headers: inTenant('Victims'), json: [{ id: a.id, loginId: 'swap-b' }, { id: b.id, loginId: 'swap-a' }] });
      expect(swapped.status, await swapped.clone().text()).to.equal(200);
      const twins = await scene.t.request(`/rest/${scene.db}/users`, { method: 'PATCH', headers: inTenant('Victims'), json: [{ _type: 'User', loginId: 'new-twin', label: 'n1' }, { _type: 'User', loginId: 'new-twin', label: 'n2' }] });
      expect(twins.status).to.equal(409);
      expect((await twins.json()).violations.map((v: { path: string }) => v.path)).to.deep.equal(['0.loginId', '1.loginId']);
    });

    it('makes one of many concurrent creations of a login ID, and refuses (409) the others', async () => {
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => post({ loginId: 'rush', label: `rush ${i}` })));
      expect(answers.map((a) => a.status).sort()).to.deep.equal([201, 409, 409, 409, 409, 409]);
    });
  });

  it('writes no password to the log', () => {
    expectNoSecretInLog([victim, attacker]);
  });
});

describe('login-tenant capture: pre-authentication', () => {
  let scene: Scene;

  before(async () => {
    const t = await startService(PREAUTH_ENV);
    const proxy = (loginId: string) => (init: Init = {}) => proxied(loginId, init.headers as Record<string, string> | undefined, init);
    const as = { admin: proxy(ADMIN.loginId), attacker: proxy('mallory'), victim: proxy('vic') };
    scene = { t, db: await setUp(t, as, 'vic', 'mallory'), victim: 'vic', as };
  });
  after(() => scene?.t.close());

  refusesCapture(() => scene);
});

describe('login-tenant capture: directory sign-in', () => {
  let slapd: Slapd;
  let scene: Scene;

  before(async () => {
    slapd = await startDirectory();
    const t = await startService(directoryEnv(slapd));
    const with_ = (auth: { loginId: string; password: string }) => (init: Init = {}) => ({ ...init, auth });
    const as = { admin: with_(credentials(PEOPLE.admin)), attacker: with_(credentials(PEOPLE.bob)), victim: with_(credentials(PEOPLE.alice)) };
    scene = { t, db: await setUp(t, as, PEOPLE.alice.uid, PEOPLE.bob.uid), victim: PEOPLE.alice.uid, as };
  });
  after(async () => {
    await scene?.t.close();
    await slapd?.close();
  });

  refusesCapture(() => scene);
});
