/**
 * Directory sign-in end to end: the real service on a real port, signing in
 * against a real slapd, as a client and as an attacker would call it.
 */
import { expect } from 'chai';
import { createUser, expectNoSecretInLog, secret } from '../../auth/fixtures.ts';
import type { Slapd } from '../../helpers/slapd.ts';
import { ADMIN, startService, type TestService } from '../../helpers/service.ts';
import { createDatabaseAs, createTenantAs, credentials, directoryEnv, PEOPLE, sessionOf, startDirectory, type Credentials } from './people.ts';

describe('auth-ldap: signing in to the service', () => {
  let slapd: Slapd;
  let t: TestService;
  let db: string;
  const admin = credentials(PEOPLE.admin);
  const alice = credentials(PEOPLE.alice);
  const bob = credentials(PEOPLE.bob);

  before(async () => {
    slapd = await startDirectory();
    t = await startService(directoryEnv(slapd));
    db = await createDatabaseAs(t, admin);
    await createTenantAs(t, db, admin, 'Research');
    await createTenantAs(t, db, admin, 'Guests');
    await createUser(t, db, { loginId: 'alice', accessLevel: 'EDITOR' }, admin);
    await createUser(t, db, { loginId: 'bob', accessLevel: 'READ_ONLY' }, admin);
    await createUser(t, db, { loginId: 'dora', accessLevel: 'READ_ONLY' }, admin);
    await createUser(t, db, { loginId: 'dora', accessLevel: 'EDITOR', tenant: 'Research' }, admin);
    await createUser(t, db, { loginId: PEOPLE.juergen.uid, accessLevel: 'EDITOR' }, admin);
    await createUser(t, db, { loginId: PEOPLE.parens.uid, accessLevel: 'READ_ONLY' }, admin);
    await createUser(t, db, { loginId: PEOPLE.star.uid, accessLevel: 'READ_ONLY' }, admin);
  });
  after(async () => {
    await t?.close();
    await slapd?.close();
  });

  const schemes = () => `/rest/${db}/schemes`;
  const newScheme = (label: string) => ({ method: 'POST', json: { _type: 'Scheme', label } });

  /** slapd's binds from now on, other than the search user's. */
  /** A login ID nobody has binds a random cn under the context instead, so that its refusal takes as long: that binds no person. */
  const DECOY = /^cn=[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12},/;

  async function watchBinds() {
    await slapd.settle();
    const before = slapd.operations().length;
    return async () => {
      await slapd.settle();
      return slapd.operations().slice(before).filter((o) => o.kind === 'BIND' && o.dn !== slapd.searchDn).map((o) => o.dn);
    };
  }

  describe('users of the service', () => {
    it('signs in with the directory password, at the level of the user in the tenant', async () => {
      let r = await t.request(schemes(), { ...newScheme('Directory Model'), auth: alice });
      expect(r.status).to.equal(201);
      expect((await r.json()).createdBy).to.equal('alice');
      r = await t.request(schemes(), { auth: bob });
      expect(r.status).to.equal(200);
      r = await t.request(schemes(), { ...newScheme('Not Bobs'), auth: bob });
      expect(r.status).to.equal(403);
    });

    it('signs in a login ID typed in another case or with spaces as the user the directory entry belongs to', async () => {
      for (const typed of ['ALICE', 'Alice', ' alice ']) {
        expect(await sessionOf(t, db, { loginId: typed, password: alice.password }), typed).to.include({ loginId: 'alice', accessLevel: 'EDITOR' });
      }
      const r = await t.request(schemes(), { ...newScheme('Typed in capitals'), auth: { loginId: 'ALICE', password: alice.password } });
      expect(r.status).to.equal(201);
      expect((await r.json()).createdBy).to.equal('alice');
    });

    it('tells the session the method, tenant and level', async () => {
      const session = await sessionOf(t, db, alice);
      expect(session).to.include({ loginId: 'alice', tenantLabel: 'Default', accessLevel: 'EDITOR', systemAdmin: false, method: 'directory' });
    });

    it('signs in login IDs with umlauts and with filter characters that really exist', async () => {
      expect(await sessionOf(t, db, credentials(PEOPLE.juergen))).to.include({ loginId: 'jürgen.müller', accessLevel: 'EDITOR' });
      expect(await sessionOf(t, db, credentials(PEOPLE.parens))).to.include({ loginId: 'r2(d2)', accessLevel: 'READ_ONLY' });
      expect(await sessionOf(t, db, credentials(PEOPLE.star))).to.include({ loginId: 'star*', accessLevel: 'READ_ONLY' });
    });

    it('lets the directory\'s tenant-name attribute override the default tenant', async () => {
      // dora is a user in Default and in Research; her entry's `o` is Research.
      expect(await sessionOf(t, db, credentials(PEOPLE.dora))).to.include({ tenantLabel: 'Research', accessLevel: 'EDITOR' });
      const r = await t.request(schemes(), { ...newScheme('Research Model'), auth: credentials(PEOPLE.dora) });
      expect(r.status).to.equal(201);
      const research = await (await t.request(`/rest/${db}/tenants/Research`, { auth: admin })).json();
      expect((await r.json()).tenant).to.equal(research.id);
      // Without the attribute the database's default tenant stays the default.
      expect(await sessionOf(t, db, bob)).to.include({ tenantLabel: 'Default' });
    });

    it('lets service-tenant win over the directory\'s tenant name', async () => {
      expect(await sessionOf(t, db, credentials(PEOPLE.dora), { 'service-tenant': 'Default' })).to.include({ tenantLabel: 'Default', accessLevel: 'READ_ONLY' });
    });

    it('keeps no passwords: a user of the service cannot be given one', async () => {
      const r = await t.request(`/rest/${db}/users`, { method: 'POST', auth: admin, json: { _type: 'User', loginId: 'frank', accessLevel: 'READ_ONLY', password: secret('franks-Password-1') } });
      expect(r.status).to.equal(400);
      expect((await r.json()).violations.map((v: { path: string }) => v.path)).to.deep.equal(['password']);
    });
  });

  describe('system administrators', () => {
    it('sign in through the directory (SERVICE_ADMIN_USER)', async () => {
      const r = await t.request('/api/admin/databases', { auth: admin });
      expect(r.status).to.equal(200);
      expect(await sessionOf(t, db, admin)).to.include({ loginId: 'admin', systemAdmin: true, accessLevel: 'ADMINISTRATOR', method: 'directory' });
    });

    it('cannot use the service\'s own administrator password any more (SERVICE_ADMIN_PASSWORD)', async () => {
      expect(ADMIN.loginId).to.equal(admin.loginId);
      expect(ADMIN.password).not.to.equal(admin.password);
      const r = await t.request('/api/admin/databases', { auth: ADMIN });
      expect(r.status).to.equal(401);
    });
  });

  describe('what does not sign in', () => {
    it('answers a wrong password and an unknown login ID alike: 401 with the Basic challenge', async () => {
      const wrong = await t.request(schemes(), { auth: { loginId: 'alice', password: 'not-Alices-1' } });
      const unknown = await t.request(schemes(), { auth: { loginId: 'nobody-here', password: 'not-Alices-1' } });
      expect(wrong.status).to.equal(401);
      expect(unknown.status).to.equal(401);
      expect(wrong.headers.get('www-authenticate')).to.match(/^Basic realm="[^"]+"/);
      expect(unknown.headers.get('www-authenticate')).to.equal(wrong.headers.get('www-authenticate'));
      expect(await unknown.json()).to.deep.equal(await wrong.json());
      // The failure did not lock alice out of her right password.
      expect((await t.request(schemes(), { auth: alice })).status).to.equal(200);
    });

    it('asks for credentials when there are none', async () => {
      const r = await t.request(schemes(), { auth: null });
      expect(r.status).to.equal(401);
      expect(r.headers.get('www-authenticate')).to.match(/Basic realm=/);
    });

    it('refuses an empty password without any bind', async () => {
      const binds = await watchBinds();
      for (const loginId of ['alice', 'admin', 'nobody-here']) {
        const r = await t.request(schemes(), { auth: { loginId, password: '' } });
        expect(r.status, loginId).to.equal(401);
      }
      expect(await binds()).to.deep.equal([]);
    });

    it('refuses a login ID shared by two directory entries, even with the right password', async () => {
      await createUser(t, db, { loginId: 'twin', accessLevel: 'ADMINISTRATOR' }, admin);
      const r = await t.request(schemes(), { auth: credentials(PEOPLE.twinPeople) });
      expect(r.status).to.equal(401);
    });

    /** With alice's or admin's password, each would find exactly that entry if it reached the filter unescaped. */
    const injections: Credentials[] = [
      { loginId: '*', password: PEOPLE.alice.password },
      { loginId: 'ali*', password: PEOPLE.alice.password },
      { loginId: 'alic\\65', password: PEOPLE.alice.password },
      { loginId: ')(uid=*', password: PEOPLE.alice.password },
      { loginId: '*)(uid=alice', password: PEOPLE.alice.password },
      { loginId: 'admin)(|(uid=*', password: PEOPLE.admin.password },
      { loginId: 'adm*', password: PEOPLE.admin.password },
      { loginId: 'admin)(uid=admin', password: PEOPLE.admin.password },
      { loginId: 'admin\u0000', password: PEOPLE.admin.password },
      { loginId: 'admin\\', password: PEOPLE.admin.password },
    ];
    it('never signs anyone in through filter syntax in the login ID', async () => {
      const binds = await watchBinds();
      for (const attempt of injections) {
        for (const path of [schemes(), '/api/admin/databases']) {
          const r = await t.request(path, { auth: attempt });
          expect(r.status, `${JSON.stringify(attempt.loginId)} on ${path}`).to.equal(401);
        }
      }
      // Nobody was even found: no person's bind reached the directory, only the stand-in binds of unknown IDs.
      const all = await binds();
      expect(all.filter((dn) => !DECOY.test(dn))).to.deep.equal([]);
      // One for each attempt the directory was asked about (a NUL is refused before that).
      expect(all).to.have.length(injections.filter((i) => !i.loginId.includes('\u0000')).length * 2);
    });

    it('denies a directory person who is no user of the service (no access rule applies)', async () => {
      const r = await t.request(schemes(), { auth: credentials(PEOPLE.carol) });
      expect(r.status).to.equal(403);
    });
  });

  describe('access rules see the directory\'s groups, tenant ID and names', () => {
    before(async () => {
      const r = await t.request(`/rest/${db}/tenants/Guests/accessRules`, {
        method: 'PUT', auth: admin, json: [
          { condition: { groups: ['analysts'] }, action: 'GRANT', accessLevel: 'READ_ONLY' },
          { condition: { tenantId: 'T-0815' }, action: 'CREATE', accessLevel: 'EDITOR' },
        ],
      });
      expect(r.status, await r.clone().text()).to.be.oneOf([200, 204]);
    });

    it('grants by a group from the multi-valued group attribute, in the tenant the entry names', async () => {
      expect(await sessionOf(t, db, credentials(PEOPLE.gina))).to.include({ loginId: 'gina', tenantLabel: 'Guests', accessLevel: 'READ_ONLY' });
    });

    it('denies when no group or tenant ID matches', async () => {
      const r = await t.request(schemes(), { auth: credentials(PEOPLE.hank) });
      expect(r.status).to.equal(403);
    });

    it('creates a user from the tenant ID, with the directory\'s given and family name, and its common name as title', async () => {
      expect(await sessionOf(t, db, credentials(PEOPLE.ida))).to.include({ loginId: 'ida', tenantLabel: 'Guests', accessLevel: 'EDITOR' });
      const r = await t.request(`/rest/${db}/users?loginId=ida`, { auth: admin, headers: { 'service-tenant': 'Guests' } });
      expect(r.status).to.equal(200);
      const users = (await r.json())._embedded.users as Record<string, unknown>[];
      expect(users).to.have.length(1);
      expect(users[0]).to.include({ loginId: 'ida', givenName: 'Ida', familyName: 'Sommer', accessLevel: 'EDITOR', title: 'Ida Sommer' });
    });
  });

  // Last: after every sign-in above was logged.
  describe('the log', () => {
    it('holds no password of any sign-in, in plain or Basic form', () => {
      expectNoSecretInLog([admin, ADMIN, ...Object.values(PEOPLE).map(credentials)]);
    });
  });
});
