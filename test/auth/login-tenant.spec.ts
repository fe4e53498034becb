import { expect } from 'chai';
import { createDirectory } from '../../runtime/auth/directory.ts';
import type { DatabaseInfo } from '../../runtime/auth/types.ts';
import { ADMIN, createDatabase, startService, type TestService } from '../helpers/service.ts';
import { createTenant, createUser, expectNoSecretInLog, inTenant, secret, type Credentials } from './fixtures.ts';
import { as, testIdentityPlugin } from './test-identity.ts';

describe('login tenant (the six rules) and the service-tenant header', () => {
  let t: TestService;
  let db: string;
  let info: DatabaseInfo;
  const tenantIds: Record<string, string> = {};
  const signedIn: Credentials[] = [];
  const user = (loginId: string) => {
    const c = { loginId, password: secret(`${loginId}-Passwort-Ü1`) };
    signedIn.push(c);
    return c;
  };

  /** The login tenant as the caller sees it: a user reads only its own tenant in the tenant list. */
  async function loginTenantOf(c: Credentials, tenant?: string): Promise<string> {
    const r = await t.request(`/rest/${db}/tenants`, { auth: c, headers: inTenant(tenant) });
    expect(r.status, `${c.loginId} in ${tenant ?? '(no header)'}`).to.equal(200);
    const labels = (await r.json())._embedded.tenants.map((x: { label: string }) => x.label);
    expect(labels).to.have.length(1);
    return labels[0];
  }

  /** The tenant an object created by the caller lands in: for system administrators, who read every tenant. */
  async function tenantOfCreation(c: Credentials, tenant?: string): Promise<string> {
    const r = await t.request(`/rest/${db}/schemes`, { method: 'POST', auth: c, headers: inTenant(tenant), json: { _type: 'Scheme', label: `S ${Math.random()}` } });
    expect(r.status).to.equal(201);
    const id = (await r.json()).tenant;
    return Object.keys(tenantIds).find((label) => tenantIds[label] === id)!;
  }

  before(async () => {
    t = await startService({}, { plugins: [testIdentityPlugin] });
    db = await createDatabase(t);
    // "Alpha" sorts before "Default", so no rule can pass by taking the first tenant in label order.
    for (const label of ['Alpha', 'Second']) tenantIds[label] = (await createTenant(t, db, label)).id as string;
    const list = await (await t.request(`/rest/${db}/tenants`)).json();
    tenantIds.Default = list._embedded.tenants.find((x: { label: string }) => x.label === 'Default').id;
    info = (await t.service.databases.get(db))!;
  });
  after(() => t.close());

  it('rule 1: service-tenant forces the tenant, over a tenant marked as default', async () => {
    const c = user('forced');
    await createUser(t, db, { ...c, tenant: 'Default' });
    await createUser(t, db, { ...c, tenant: 'Second', defaultTenant: true });
    expect(await loginTenantOf(c)).to.equal('Second');
    expect(await loginTenantOf(c, 'Default')).to.equal('Default');
  });

  it('rule 2: a system administrator logs into the default tenant, even with a user marked as default elsewhere', async () => {
    await createUser(t, db, { loginId: ADMIN.loginId, tenant: 'Alpha', defaultTenant: true, accessLevel: 'READ_ONLY' });
    expect(await tenantOfCreation(ADMIN)).to.equal('Default');
  });

  it('rule 3: a user marked as logged in by default logs into that tenant', async () => {
    const c = user('marked');
    await createUser(t, db, { ...c, tenant: 'Default' });
    await createUser(t, db, { ...c, tenant: 'Alpha' });
    await createUser(t, db, { ...c, tenant: 'Second', defaultTenant: true });
    expect(await loginTenantOf(c)).to.equal('Second');
  });

  it('rule 4: without a mark, a user in the default tenant logs into the default tenant', async () => {
    const c = user('both');
    await createUser(t, db, { ...c, tenant: 'Alpha' });
    await createUser(t, db, { ...c, tenant: 'Default' });
    expect(await loginTenantOf(c)).to.equal('Default');
  });

  it('rule 5: a user only in another tenant logs into that tenant', async () => {
    const c = user('elsewhere');
    await createUser(t, db, { ...c, tenant: 'Second' });
    expect(await loginTenantOf(c)).to.equal('Second');
  });

  it('rule 6: a login ID that does not exist gets the default tenant, where it has no user: denied, no guest login', async () => {
    const login = await createDirectory(t.service.storage.knex, [ADMIN.loginId]).loginTenant(info, 'nobody', undefined);
    expect(login).to.include({ tenant: tenantIds.Default, tenantLabel: 'Default', user: null, systemAdmin: false });
    const r = await t.request(`/rest/${db}/schemes`, { auth: { loginId: 'nobody', password: 'whatever-1' } });
    expect(r.status).to.equal(401);
  });

  it('lets a method override the default tenant (rules 2, 4 and 6), but not a tenant named in service-tenant', async () => {
    const directory = createDirectory(t.service.storage.knex, [ADMIN.loginId]);
    expect((await directory.loginTenant(info, 'nobody', undefined, 'Second')).tenantLabel).to.equal('Second');
    expect((await directory.loginTenant(info, ADMIN.loginId, undefined, 'Second')).tenantLabel).to.equal('Second');
    expect((await directory.loginTenant(info, 'nobody', 'Alpha', 'Second')).tenantLabel).to.equal('Alpha');
    expect((await directory.loginTenant(info, 'nobody', undefined, 'No such tenant')).tenantLabel).to.equal('Default');
  });

  describe('rejections', () => {
    let wrongPassword: Response;
    let wrongBody: unknown;
    const rejected = async (r: Response) => {
      expect(r.status).to.equal(401);
      expect(r.headers.get('www-authenticate')).to.equal(wrongPassword.headers.get('www-authenticate'));
      expect(await r.json()).to.deep.equal(wrongBody);
    };
    const c = { loginId: 'member', password: secret('member-Passwort-2') };

    before(async () => {
      signedIn.push(c);
      await createUser(t, db, { ...c, tenant: 'Second', accessLevel: 'EDITOR' });
      wrongPassword = await t.request(`/rest/${db}/schemes`, { auth: { ...c, password: 'wrong-Passwort' } });
      wrongBody = await wrongPassword.json();
    });

    it('answers 403 to the right password for a tenant that does not exist, as for one where the login ID has no user', async () => {
      const unknown = await t.request(`/rest/${db}/schemes`, { auth: c, headers: inTenant('No such tenant') });
      const noUser = await t.request(`/rest/${db}/schemes`, { auth: c, headers: inTenant('Default') });
      expect([unknown.status, noUser.status]).to.deep.equal([403, 403]);
      expect(await unknown.json()).to.deep.equal(await noUser.json());
    });

    it('answers a wrong password for either tenant as it answers a wrong password without the header', async () => {
      await rejected(await t.request(`/rest/${db}/schemes`, { auth: { ...c, password: 'wrong-Passwort' }, headers: inTenant('No such tenant') }));
      await rejected(await t.request(`/rest/${db}/schemes`, { auth: { ...c, password: 'wrong-Passwort' }, headers: inTenant('Default') }));
    });

    it('answers a login ID that does not exist as it answers a wrong password', async () => {
      await rejected(await t.request(`/rest/${db}/schemes`, { auth: { loginId: 'no-such-login', password: c.password } }));
    });

    it('answers 403 by every method, the same for a tenant that does not exist and one without access', async () => {
      const [member] = (await (await t.request(`/rest/${db}/users?loginId=member`, { headers: inTenant('Second') })).json())._embedded.users;
      const { key } = await (await t.request(`/rest/${db}/users/${member.id}/accessKeys`, { method: 'POST', json: {} })).json();
      const methods: [string, (tenant: string) => Promise<Response>][] = [
        ['password', (tenant) => t.request(`/rest/${db}/schemes`, { auth: c, headers: inTenant(tenant) })],
        ['external identity', (tenant) => t.request(`/rest/${db}/schemes`, as({ loginId: 'member' }, inTenant(tenant)))],
        ['access key', (tenant) => t.request(`/rest/${db}/schemes`, { auth: null, headers: { 'service-access-key': key, ...inTenant(tenant) } })],
      ];
      for (const [method, call] of methods) {
        const [unknown, noAccess] = [await call('No such tenant'), await call('Alpha')];
        expect([unknown.status, noAccess.status], method).to.deep.equal([403, 403]);
        expect(await unknown.json(), method).to.deep.equal(await noAccess.json());
      }
    });

    it('still signs the member in with the right password and no header', async () => {
      expect(await loginTenantOf(c)).to.equal('Second');
    });
  });

  it('gives the system administrator access to every tenant, and 403 (once verified) for a tenant that does not exist', async () => {
    expect(await tenantOfCreation(ADMIN, 'Second')).to.equal('Second');
    expect(await tenantOfCreation(ADMIN, 'Alpha')).to.equal('Alpha');
    const inSecond = await (await t.request(`/rest/${db}/schemes`, { headers: inTenant('Second') })).json();
    const inDefault = await (await t.request(`/rest/${db}/schemes`)).json();
    expect(inSecond.total).to.equal(1);
    expect(inDefault._embedded.schemes.map((s: { id: string }) => s.id)).to.not.include(inSecond._embedded.schemes[0].id);
    expect((await t.request(`/rest/${db}/schemes`, { headers: inTenant('No such tenant') })).status).to.equal(403);
    expect((await t.request(`/rest/${db}/schemes`, { auth: { ...ADMIN, password: 'wrong-Passwort' }, headers: inTenant('No such tenant') })).status).to.equal(401);
  });

  it('writes no password to the log', () => {
    expectNoSecretInLog(signedIn);
  });
});
