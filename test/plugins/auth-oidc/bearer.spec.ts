/**
 * OpenID Connect bearer authentication (method 4) from the caller's side:
 * tokens from a real OpenID provider (oidc-provider, password and
 * client-credentials grants) against the real service on a real port.
 */
import { expect } from 'chai';
import { startService, type TestService } from '../../helpers/service.ts';
import { startOidcProvider, type TestProvider } from '../../helpers/oidc-provider.ts';
import {
  account, ADMIN_LOGIN, bearer, createDatabaseWith, createTenantWith, createUserWith, expectNoTokenIn, expectNoTokenInLog,
  oidcEnv, sentTokens, sessionWith, tokenOf,
} from './helpers.ts';

describe('OpenID Connect: sign-in with a bearer token from the provider', function () {
  this.timeout(120_000);
  let provider: TestProvider;
  let t: TestService;
  let db: string;
  let adminToken: string;
  const tenantIds: Record<string, string> = {};

  before(async () => {
    provider = await startOidcProvider({
      accounts: [
        account(ADMIN_LOGIN),
        account('editor', { groups: ['staff'], name: 'Eddie Editor', family_name: 'Editor', given_name: 'Eddie' }),
        account('reader'),
        account('roamer', { tenant_name: 'Second' }),
        account('homebody'),
        account('stranger'),
        account('keyholder'),
        // A person whose login ID the provider later gives to someone else (a new subject).
        account('pat', {}, 'sub-pat-original'),
        account('pat-successor', { login_id: 'pat' }, 'sub-pat-successor'),
        // Another person the provider gives the system administrator's login ID (a new subject).
        account('admin-successor', { login_id: ADMIN_LOGIN }, 'sub-admin-successor'),
        account('guest', { groups: ['partners', 'visitors'], tenant_id: 'partner-org', given_name: 'Gina', family_name: 'Guest', name: 'Gina Guest' }),
        account('outsider', { groups: 'visitors, others', tenant_id: 'unknown-org' }),
      ],
    });
    t = await startService(oidcEnv(provider));
    adminToken = await tokenOf(provider, ADMIN_LOGIN);
    db = await createDatabaseWith(t, adminToken);
    // "Alpha" sorts before "Default": no check can pass by taking the first tenant in label order.
    for (const label of ['Alpha', 'Second']) tenantIds[label] = (await createTenantWith(t, db, adminToken, label)).id as string;
    tenantIds.Default = (await sessionWith(t, db, adminToken)).tenant;
    await createUserWith(t, db, adminToken, { loginId: 'editor', accessLevel: 'EDITOR', tenant: 'Default' });
    await createUserWith(t, db, adminToken, { loginId: 'reader', accessLevel: 'READ_ONLY', tenant: 'Default' });
    for (const label of ['Default', 'Second']) {
      await createUserWith(t, db, adminToken, { loginId: 'roamer', accessLevel: 'READ_ONLY', tenant: label });
      await createUserWith(t, db, adminToken, { loginId: 'homebody', accessLevel: 'READ_ONLY', tenant: label });
    }
    await createUserWith(t, db, adminToken, { loginId: 'keyholder', accessLevel: 'EDITOR', tenant: 'Alpha' });
    await createUserWith(t, db, adminToken, { loginId: 'pat', accessLevel: 'EDITOR', tenant: 'Default' });
  });
  after(async () => {
    await t?.close();
    await provider?.close();
  });

  const scheme = (label: string) => ({ method: 'POST', json: { _type: 'Scheme', label } });

  it('signs an existing user in with a password-grant token, in the user\'s tenant, with the user\'s access level', async () => {
    const token = await tokenOf(provider, 'editor');
    expect(await sessionWith(t, db, token)).to.deep.equal({
      loginId: 'editor', tenant: tenantIds.Default, tenantLabel: 'Default', accessLevel: 'EDITOR', systemAdmin: false, method: 'oidc',
    });
    const created = await t.request(`/rest/${db}/schemes`, bearer(token, {}, scheme('Written with a token')));
    expect(created.status).to.equal(201);
    await expectNoTokenIn(created, token);
    const body = await created.json();
    expect(body.tenant).to.equal(tenantIds.Default);
    expect(body.createdBy).to.equal('editor');
  });

  it('enforces the access level: a READ_ONLY user reads but cannot write', async () => {
    const token = await tokenOf(provider, 'reader');
    expect((await t.request(`/rest/${db}/schemes`, bearer(token))).status).to.equal(200);
    expect((await t.request(`/rest/${db}/schemes`, bearer(token, {}, scheme('Not by a reader')))).status).to.equal(403);
    const list = await (await t.request(`/rest/${db}/schemes`, bearer(token))).text();
    expect(list).to.not.contain('Not by a reader');
  });

  it('makes a login ID of SERVICE_ADMIN_USER a system administrator with access to every tenant and the admin interface', async () => {
    expect(await sessionWith(t, db, adminToken)).to.include({ loginId: ADMIN_LOGIN, tenantLabel: 'Default', systemAdmin: true, accessLevel: 'ADMINISTRATOR' });
    const tenants = await (await t.request(`/rest/${db}/tenants`, bearer(adminToken))).json();
    expect(tenants._embedded.tenants.map((x: { label: string }) => x.label).sort()).to.deep.equal(['Alpha', 'Default', 'Second']);
    for (const label of ['Alpha', 'Second']) expect((await sessionWith(t, db, adminToken, { 'service-tenant': label })).tenantLabel).to.equal(label);
    const databases = await t.request('/api/admin/databases', bearer(adminToken));
    expect(databases.status).to.equal(200);
    expect((await databases.json()).map((d: { name: string }) => d.name)).to.include(db);
    // Nobody else is a system administrator, whatever their token says.
    expect((await t.request('/api/admin/databases', bearer(await tokenOf(provider, 'editor')))).status).to.equal(403);
  });

  it('lets the tenant-name claim override the default tenant (SERVICE_OIDC_JWT_TENANT_NAME)', async () => {
    // Both have a user in Default and in Second; only roamer's token names Second.
    expect((await sessionWith(t, db, await tokenOf(provider, 'homebody'))).tenantLabel).to.equal('Default');
    expect((await sessionWith(t, db, await tokenOf(provider, 'roamer'))).tenantLabel).to.equal('Second');
    // service-tenant still comes first (login-tenant rule 1).
    expect((await sessionWith(t, db, await tokenOf(provider, 'roamer'), { 'service-tenant': 'Default' })).tenantLabel).to.equal('Default');
  });

  it('refuses a verified caller without a user in the login tenant and without a matching access rule (403)', async () => {
    const r = await t.request(`/rest/${db}/schemes`, bearer(await tokenOf(provider, 'stranger')));
    expect(r.status).to.equal(403);
  });

  it('answers 401 with a Bearer challenge without credentials, and offers no password login', async () => {
    const r = await t.request(`/rest/${db}/schemes`, { auth: null });
    expect(r.status).to.equal(401);
    const challenge = r.headers.get('www-authenticate') ?? '';
    expect(challenge).to.match(/^Bearer realm="[^"]+"/);
    expect(challenge).to.not.match(/basic/i);
    // The basic driver is off while OpenID Connect is on: even the administrator's password does not sign in.
    expect((await t.request(`/rest/${db}/schemes`)).status).to.equal(401);
  });

  it('identifies a machine client by its access key: a client-credentials token with service-access-key is the key\'s user', async function () {
    const keyholder = await (await t.request(`/rest/${db}/users?loginId=keyholder`, bearer(adminToken, { 'service-tenant': 'Alpha' }))).json();
    const userId = keyholder._embedded?.users?.[0]?.id;
    expect(userId, 'keyholder user').to.be.a('string');
    const made = await t.request(`/rest/${db}/users/${userId}/accessKeys`, bearer(adminToken, { 'service-tenant': 'Alpha' }, { method: 'POST', json: { description: 'batch job' } }));
    expect(made.status).to.equal(201);
    const { key } = await made.json();
    const machineToken = await provider.clientCredentialsToken();
    sentTokens.add(machineToken);

    const withKey = await t.request(`/api/${db}/session`, bearer(machineToken, { 'service-access-key': key }));
    expect(withKey.status).to.equal(200);
    expect(await withKey.json()).to.include({ loginId: 'keyholder', tenantLabel: 'Alpha', accessLevel: 'EDITOR', method: 'accessKey' });
    expect((await t.request(`/rest/${db}/schemes`, bearer(machineToken, { 'service-access-key': key }, scheme('By the batch job')))).status).to.equal(201);

    // The token must still be valid: the key does not carry a forged or foreign one.
    const tampered = `${machineToken.slice(0, -4)}AAAA`;
    expect((await t.request(`/api/${db}/session`, bearer(tampered, { 'service-access-key': key }))).status).to.equal(401);
    // A wrong key with a good token: 401.
    expect((await t.request(`/api/${db}/session`, bearer(machineToken, { 'service-access-key': `${key.slice(0, -2)}xx` }))).status).to.equal(401);
  });

  it('refuses a client-credentials token alone: it carries no login ID (401)', async () => {
    const machineToken = await provider.clientCredentialsToken();
    sentTokens.add(machineToken);
    const r = await t.request(`/rest/${db}/schemes`, bearer(machineToken));
    expect(r.status).to.equal(401);
    expect(r.headers.get('www-authenticate')).to.equal('Bearer realm="metadata", error="invalid_token"');
    await expectNoTokenIn(r, machineToken);
  });

  it('pins the Subject Identifier: a token for the same login ID with another subject is refused (401)', async function () {
    const original = await tokenOf(provider, 'pat');
    expect((await sessionWith(t, db, original)).loginId).to.equal('pat');
    const successor = await tokenOf(provider, 'pat-successor');
    const r = await t.request(`/api/${db}/session`, bearer(successor));
    expect(r.status).to.equal(401);
    // The original subject still signs in.
    expect((await sessionWith(t, db, original)).loginId).to.equal('pat');
  });

  it('pins the system administrator\'s Subject Identifier too, with no user: another subject is refused (401) everywhere', async () => {
    expect((await sessionWith(t, db, adminToken)).systemAdmin).to.equal(true);
    const successor = await tokenOf(provider, 'admin-successor');
    for (const path of [`/api/${db}/session`, `/rest/${db}/tenants`, '/api/admin/databases']) {
      expect((await t.request(path, bearer(successor))).status, path).to.equal(401);
    }
    expect((await t.request('/api/admin/databases', bearer(adminToken))).status).to.equal(200);
  });

  it('hands groups, tenant ID and names to the access rules of the login tenant', async function () {
    const put = await t.request(`/rest/${db}/tenants/Default/accessRules`, bearer(adminToken, {}, {
      method: 'PUT',
      json: [
        { condition: { tenantId: 'unknown-org' }, action: 'DENY' },
        { condition: { groups: ['partners'] }, action: 'CREATE', accessLevel: 'READ_ONLY' },
        { condition: { groups: ['others'] }, action: 'GRANT', accessLevel: 'READ_ONLY' },
      ],
    }));
    expect(put.status).to.equal(200);
    try {
      // guest: groups as a list → CREATE: a user made with the token's names.
      const guest = await t.request(`/rest/${db}/schemes`, bearer(await tokenOf(provider, 'guest')));
      expect(guest.status).to.equal(200);
      const users = await (await t.request(`/rest/${db}/users?loginId=guest`, bearer(adminToken))).json();
      expect(users._embedded.users).to.have.length(1);
      expect(users._embedded.users[0]).to.include({ loginId: 'guest', accessLevel: 'READ_ONLY', givenName: 'Gina', familyName: 'Guest', title: 'Gina Guest' });
      // outsider: groups as a comma-separated text, in "others" — but its tenant ID meets the DENY rule first.
      expect((await t.request(`/rest/${db}/schemes`, bearer(await tokenOf(provider, 'outsider')))).status).to.equal(403);
    } finally {
      await t.request(`/rest/${db}/tenants/Default/accessRules`, bearer(adminToken, {}, { method: 'PUT', json: [] }));
    }
  });

  it('reuses a verified token: many requests with one token all pass, and the provider is not asked again', async () => {
    const token = await tokenOf(provider, 'editor');
    const before = { ...provider.requests };
    const answers = await Promise.all(Array.from({ length: 30 }, () => t.request(`/rest/${db}/schemes`, bearer(token))));
    expect(answers.map((r) => r.status)).to.deep.equal(Array(30).fill(200));
    expect(provider.requests).to.deep.equal(before);
  });

  it('writes no token into any log line', () => {
    expect(sentTokens.size).to.be.greaterThan(5);
    expectNoTokenInLog();
  });
});
