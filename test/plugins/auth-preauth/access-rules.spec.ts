/**
 * Pre-authenticated callers without a user meet the tenant's access rules:
 * the groups and tenant ID they are judged by come from the proxy's headers,
 * or from the injected JWT where a header is empty; a user made by a CREATE
 * rule carries the names and the subject identifier the same way.
 */
import { expect } from 'chai';
import { ADMIN, startService, type TestService } from '../../helpers/service.ts';
import { createDatabaseAs, PREAUTH_ENV, proxied, sessionOf, unsignedJwt } from './helpers.ts';

const H = { groups: 'X-Remote-Groups', tenantId: 'X-Remote-Tenant-Id', family: 'X-Remote-Family', given: 'X-Remote-Given', jwt: 'X-Remote-Jwt' };

const ENV = {
  ...PREAUTH_ENV,
  SERVICE_REMOTE_USER_GROUP_ID: H.groups,
  SERVICE_REMOTE_USER_TENANT_ID: H.tenantId,
  SERVICE_REMOTE_USER_FAMILY_NAME: H.family,
  SERVICE_REMOTE_USER_GIVEN_NAME: H.given,
  SERVICE_REMOTE_USER_OIDC_JWT: H.jwt,
  SERVICE_OIDC_JWT_SUB_ID: 'sub',
  SERVICE_OIDC_JWT_GROUP_ID: 'groups',
  SERVICE_OIDC_JWT_TENANT_ID: 'tid',
  SERVICE_OIDC_JWT_FAMILY_NAME: 'family_name',
  SERVICE_OIDC_JWT_GIVEN_NAME: 'given_name',
};

const RULES = [
  { condition: { groups: ['blocked'] }, action: 'DENY' },
  { condition: { groups: ['readers'] }, action: 'GRANT', accessLevel: 'READ_ONLY' },
  { condition: { tenantId: 'tid-create' }, action: 'CREATE', accessLevel: 'EDITOR' },
];

async function setRules(t: TestService, db: string) {
  const r = await t.request(`/rest/${db}/tenants/Default/accessRules`, proxied(ADMIN.loginId, {}, { method: 'PUT', json: RULES }));
  expect(r.status, await r.clone().text()).to.equal(200);
}

describe('pre-authentication: access rules for callers without a user', () => {
  let t: TestService;
  let db: string;

  before(async () => {
    t = await startService(ENV);
    db = await createDatabaseAs(t, ADMIN.loginId);
    await setRules(t, db);
  });
  after(() => t?.close());

  const status = async (loginId: string, headers: Record<string, string>) => (await t.request(`/api/${db}/session`, proxied(loginId, headers))).status;

  async function userOf(loginId: string): Promise<Record<string, unknown>> {
    const r = await t.request(`/rest/${db}/users?loginId=${encodeURIComponent(loginId)}`, proxied(ADMIN.loginId));
    const users = (await r.json())._embedded?.users ?? [];
    expect(users, loginId).to.have.length(1);
    return users[0];
  }

  it('judges by the group header', async () => {
    expect(await sessionOf(t, db, 'guest-1', { [H.groups]: 'x, readers' })).to.include({ loginId: 'guest-1', accessLevel: 'READ_ONLY' });
    expect((await t.request(`/rest/${db}/schemes`, proxied('guest-1', { [H.groups]: 'readers' }, { method: 'POST', json: { _type: 'Scheme', label: 'By a guest' } }))).status).to.equal(403);
    expect(await status('guest-1', { [H.groups]: 'blocked, readers' })).to.equal(403);
    expect(await status('guest-1', {})).to.equal(403);
  });

  it('judges by the JWT\'s groups only when the group header is empty', async () => {
    expect(await status('guest-2', { [H.jwt]: unsignedJwt({ groups: ['readers'] }) })).to.equal(200);
    expect(await status('guest-2', { [H.jwt]: unsignedJwt({ groups: 'readers' }), [H.groups]: ' ' })).to.equal(200);
    expect(await status('guest-2', { [H.jwt]: unsignedJwt({ groups: ['readers'] }), [H.groups]: 'others' })).to.equal(403);
    expect(await status('guest-2', { [H.jwt]: unsignedJwt({ groups: ['blocked'] }), [H.groups]: 'readers' })).to.equal(200);
  });

  it('never lets the JWT sign in a caller the proxy did not name, whatever its groups (401)', async () => {
    expect((await t.request(`/api/${db}/session`, proxied(undefined, { [H.jwt]: unsignedJwt({ sub: 'guest-3', groups: ['readers'] }) }))).status).to.equal(401);
  });

  it('creates a user by the JWT\'s tenant ID, with the names of the headers, or of the JWT where they are empty', async () => {
    const claims = { tid: 'tid-create', family_name: 'Claimed', given_name: 'Jo', sub: 'subject-a' };
    expect(await sessionOf(t, db, 'newbie', { [H.jwt]: unsignedJwt(claims), [H.family]: 'Headed' })).to.include({ accessLevel: 'EDITOR' });
    const user = await userOf('newbie');
    expect(user).to.include({ loginId: 'newbie', familyName: 'Headed', givenName: 'Jo', accessLevel: 'EDITOR' });
    // A tenant-ID header that has a value wins over the claim: no rule for it.
    expect(await status('other-newbie', { [H.jwt]: unsignedJwt(claims), [H.tenantId]: 'tid-other' })).to.equal(403);
  });

  it('pins the JWT\'s subject identifier to the created user: another one is refused (401)', async () => {
    const claims = { tid: 'tid-create', sub: 'subject-b' };
    expect(await status('pinned', { [H.jwt]: unsignedJwt(claims) })).to.equal(200);
    expect(await status('pinned', { [H.jwt]: unsignedJwt(claims) })).to.equal(200);
    expect((await userOf('pinned')).subjectId).to.equal('subject-b');
    expect(await status('pinned', { [H.jwt]: unsignedJwt({ ...claims, sub: 'subject-c' }) })).to.equal(401);
    // Leaving the JWT, or its subject claim, out does not get around the pin.
    expect(await status('pinned', {})).to.equal(401);
    expect(await status('pinned', { [H.jwt]: unsignedJwt({ tid: 'tid-create' }) })).to.equal(401);
    // A caller with nothing pinned still signs in without a JWT.
    expect(await status('guest-4', { [H.groups]: 'readers' })).to.equal(200);
  });

  it('pins the system administrator\'s subject identifier, which then cannot be left out either (401)', async () => {
    const admin = (headers: Record<string, string>) => t.request('/api/admin/databases', proxied(ADMIN.loginId, headers));
    expect((await admin({ [H.jwt]: unsignedJwt({ sub: 'root-1' }) })).status).to.equal(200);
    expect((await admin({ [H.jwt]: unsignedJwt({ sub: 'root-2' }) })).status).to.equal(401);
    expect((await admin({})).status).to.equal(401);
    expect(await status(ADMIN.loginId, {})).to.equal(401);
    expect(await status(ADMIN.loginId, { [H.jwt]: unsignedJwt({ sub: 'root-1' }) })).to.equal(200);
  });
});

describe('pre-authentication: access rules switched off by the deprecated SERVICE_GUEST_USERS', () => {
  it('lets no caller without a user in, whatever the rules say (403)', async () => {
    const t = await startService({ ...ENV, SERVICE_GUEST_USERS: 'false' });
    try {
      const db = await createDatabaseAs(t, ADMIN.loginId);
      await setRules(t, db);
      expect((await t.request(`/api/${db}/session`, proxied('guest-1', { [H.groups]: 'readers' }))).status).to.equal(403);
      expect((await t.request(`/api/${db}/session`, proxied(ADMIN.loginId, { [H.groups]: 'readers' }))).status).to.equal(200);
    } finally {
      await t.close();
    }
  });
});
