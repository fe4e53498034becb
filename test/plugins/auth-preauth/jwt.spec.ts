/**
 * The JWT injected next to the proxy's headers (SERVICE_REMOTE_USER_OIDC_JWT):
 * decoded, never verified, and used only where a header is empty.
 *
 * What the driver makes of headers and claims is read on a real port from a
 * small app around the driver itself, since the service shows groups and
 * tenant ID only through their effect (access-rules.spec.ts); what the core
 * shows directly (the login tenant) is checked through the service.
 */
import { expect } from 'chai';
import http from 'node:http';
import { generateKeyPair, SignJWT } from 'jose';
import Koa from 'koa';
import { PreAuthDriver } from '../../../plugins/auth-preauth/driver.ts';
import { manifest } from '../../../plugins/auth-preauth/index.ts';
import { readSettings } from '../../../plugins/auth-preauth/settings.ts';
import { ServiceError } from '../../../runtime/errors.ts';
import { checkPluginConfig } from '../../../runtime/plugins.ts';
import { ADMIN, logLines, startService, type TestService } from '../../helpers/service.ts';
import { createDatabaseAs, createTenantAs, createUserAs, PREAUTH_ENV, proxied, rawRequest, sessionOf, USER_HEADER, utf8Bytes, unsignedJwt } from './helpers.ts';

const H = {
  groups: 'X-Remote-Groups', tenantId: 'X-Remote-Tenant-Id', family: 'X-Remote-Family', given: 'X-Remote-Given',
  tenantName: 'X-Remote-Tenant', jwt: 'X-Remote-Jwt',
};

const JWT_ENV = {
  ...PREAUTH_ENV,
  SERVICE_REMOTE_USER_GROUP_ID: H.groups,
  SERVICE_REMOTE_USER_TENANT_ID: H.tenantId,
  SERVICE_REMOTE_USER_FAMILY_NAME: H.family,
  SERVICE_REMOTE_USER_GIVEN_NAME: H.given,
  SERVICE_REMOTE_USER_TENANT_NAME: H.tenantName,
  SERVICE_REMOTE_USER_OIDC_JWT: H.jwt,
  SERVICE_OIDC_JWT_SUB_ID: 'sub',
  SERVICE_OIDC_JWT_GROUP_ID: 'groups',
  SERVICE_OIDC_JWT_TENANT_ID: 'tid',
  SERVICE_OIDC_JWT_USER_NAME: 'name',
  SERVICE_OIDC_JWT_FAMILY_NAME: 'family_name',
  SERVICE_OIDC_JWT_GIVEN_NAME: 'given_name',
  SERVICE_OIDC_JWT_TENANT_NAME: 'tenant',
};

const FULL_CLAIMS = {
  sub: 'subject-1', groups: ['jwt-a', 'jwt-b'], tid: 'jwt-tenant-id', name: 'Jay Doubleyou', family_name: 'Doubleyou',
  given_name: 'Jay', tenant: 'Alpha', preferred_username: ADMIN.loginId, aud: 'metadata-ui',
};

/** A real port serving what the driver, built from `env` as the plugin builds it (schema first), reads from a request. */
async function identityServer(env: Record<string, string>) {
  const warnings: object[] = [];
  const driver = new PreAuthDriver(readSettings(checkPluginConfig(manifest, env)), { warn: (o) => warnings.push(o) });
  const app = new Koa();
  app.use(async (ctx) => {
    try {
      ctx.body = { identity: await driver.identityOf(ctx) };
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      ctx.status = err.status;
      ctx.body = { status: err.status };
    }
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    warnings,
    async read(headers: Record<string, string>): Promise<{ status: number; identity?: Record<string, unknown> | null }> {
      const r = await fetch(url, { headers });
      const body = await r.json();
      return { status: r.status, identity: body.identity };
    },
    url,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('pre-authentication: headers and the injected JWT, as the driver reads them', () => {
  let s: Awaited<ReturnType<typeof identityServer>>;
  before(async () => {
    s = await identityServer(JWT_ENV);
  });
  after(() => s.close());

  it('reads every header: groups split at commas, trimmed, empty ones dropped', async () => {
    const { identity } = await s.read({
      [USER_HEADER]: 'alice', [H.groups]: ' g1, ,g2 ,, g3 ', [H.tenantId]: 'tid-1', [H.family]: 'Liddell', [H.given]: 'Alice', [H.tenantName]: 'Second',
    });
    expect(identity).to.deep.equal({ loginId: 'alice', groups: ['g1', 'g2', 'g3'], tenantId: 'tid-1', familyName: 'Liddell', givenName: 'Alice', tenantName: 'Second', subjectId: null });
  });

  it('reads nothing but the login ID when the other headers are absent, and no identity without it', async () => {
    // Subjects are pinned (SERVICE_OIDC_JWT_SUB_ID) and no JWT names one: null, which the core refuses for a pinned user.
    expect((await s.read({ [USER_HEADER]: 'alice', [H.groups]: ' , ' })).identity).to.deep.equal({ loginId: 'alice', subjectId: null });
    expect(await s.read({ [H.groups]: 'g1', [H.family]: 'Liddell' })).to.deep.equal({ status: 200, identity: null });
  });

  it('fills every empty header from its claim; the user name only when both name headers are empty', async () => {
    const { identity } = await s.read({ [USER_HEADER]: 'alice', [H.jwt]: unsignedJwt(FULL_CLAIMS) });
    expect(identity).to.deep.equal({
      loginId: 'alice', subjectId: 'subject-1', groups: ['jwt-a', 'jwt-b'], tenantId: 'jwt-tenant-id', tenantName: 'Alpha',
      familyName: 'Doubleyou', givenName: 'Jay', commonName: 'Jay Doubleyou',
    });
  });

  it('keeps every header that has a value over its claim', async () => {
    const { identity } = await s.read({
      [USER_HEADER]: 'alice', [H.groups]: 'g1', [H.tenantId]: 'tid-1', [H.family]: 'Liddell', [H.given]: 'Alice', [H.tenantName]: 'Second',
      [H.jwt]: unsignedJwt(FULL_CLAIMS),
    });
    expect(identity).to.deep.equal({
      loginId: 'alice', subjectId: 'subject-1', groups: ['g1'], tenantId: 'tid-1', familyName: 'Liddell', givenName: 'Alice', tenantName: 'Second',
    });
  });

  it('takes the user name only if neither name header has a value; an empty name header counts as empty', async () => {
    const given = (await s.read({ [USER_HEADER]: 'alice', [H.given]: 'Alice', [H.jwt]: unsignedJwt(FULL_CLAIMS) })).identity!;
    expect(given).to.include({ givenName: 'Alice', familyName: 'Doubleyou' });
    expect(given).to.not.have.property('commonName');
    const blank = (await s.read({ [USER_HEADER]: 'alice', [H.given]: ' ', [H.family]: '', [H.jwt]: unsignedJwt(FULL_CLAIMS) })).identity!;
    expect(blank).to.include({ givenName: 'Jay', familyName: 'Doubleyou', commonName: 'Jay Doubleyou' });
  });

  it('reads a group claim given as one comma-separated string, and numbers as text', async () => {
    const { identity } = await s.read({ [USER_HEADER]: 'alice', [H.jwt]: unsignedJwt({ groups: ' x, ,y ', tid: 42 }) });
    expect(identity).to.deep.equal({ loginId: 'alice', groups: ['x', 'y'], tenantId: '42', subjectId: null });
  });

  it('reads claims whatever signed the token: the signature is not verified', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const signed = await new SignJWT({ groups: ['signed'] }).setProtectedHeader({ alg: 'ES256' }).setSubject('s-2').sign(privateKey);
    const { identity } = await s.read({ [USER_HEADER]: 'alice', [H.jwt]: signed });
    expect(identity).to.deep.equal({ loginId: 'alice', subjectId: 's-2', groups: ['signed'] });
  });

  it('never takes the login ID from the JWT', async () => {
    const { identity } = await s.read({ [H.jwt]: unsignedJwt({ ...FULL_CLAIMS, sub: ADMIN.loginId, name: ADMIN.loginId }) });
    expect(identity).to.equal(null);
  });

  it('refuses a malformed JWT, or a claim of the wrong kind (401), naming neither token nor value in the log', async () => {
    const malformed = ['not-a-jwt', 'a.b.c', `${unsignedJwt({}).split('.')[0]}.${Buffer.from('[1,2]').toString('base64url')}.`, 'e30.e30.e30.e30.e30'];
    for (const jwt of malformed) expect((await s.read({ [USER_HEADER]: 'alice', [H.jwt]: jwt })).status, jwt).to.equal(401);
    for (const claims of [{ groups: { a: 1 } }, { groups: ['ok', 7] }, { tenant: ['Alpha'] }, { name: 'x'.repeat(257) }, { given_name: 'Ja\u0000y' }]) {
      expect((await s.read({ [USER_HEADER]: 'alice', [H.jwt]: unsignedJwt(claims) })).status, JSON.stringify(claims)).to.equal(401);
    }
    expect(JSON.stringify(s.warnings)).to.not.contain('a.b.c').and.not.contain('xxxxxxxx');
    expect(s.warnings.some((w) => (w as { claim?: string }).claim === 'groups')).to.equal(true);
  });

  it('refuses the JWT header or a single-valued header sent twice (401), and adds up repeated group headers', async () => {
    const jwt = unsignedJwt({ groups: ['jwt-a'] });
    expect((await rawRequest(s.url, '/', [[USER_HEADER, 'alice'], [H.jwt, jwt], [H.jwt, jwt]])).status).to.equal(401);
    expect((await rawRequest(s.url, '/', [[USER_HEADER, 'alice'], [H.tenantName, 'Alpha'], [H.tenantName, 'Second']])).status).to.equal(401);
    const groups = await rawRequest(s.url, '/', [[USER_HEADER, 'alice'], [H.groups, 'g1,\tg2'], [H.groups, 'g3']]);
    expect(JSON.parse(groups.body).identity).to.deep.equal({ loginId: 'alice', groups: ['g1', 'g2', 'g3'], subjectId: null });
  });

  it('reads UTF-8 bytes in the other headers as UTF-8 too', async () => {
    const r = await rawRequest(s.url, '/', [[USER_HEADER, 'alice'], [H.family, utf8Bytes('Müller-Lüdenscheidt')], [H.groups, utf8Bytes('Entwicklung, Qualität')]]);
    expect(JSON.parse(r.body).identity).to.deep.equal({ loginId: 'alice', familyName: 'Müller-Lüdenscheidt', groups: ['Entwicklung', 'Qualität'], subjectId: null });
  });

  it('reads claims named as a path into nested objects, a top-level claim of that name first', async () => {
    const nested = await identityServer({ ...JWT_ENV, SERVICE_OIDC_JWT_GROUP_ID: 'realm_access.roles' });
    try {
      const jwt = unsignedJwt({ realm_access: { roles: ['r1', 'r2'] } });
      expect((await nested.read({ [USER_HEADER]: 'alice', [H.jwt]: jwt })).identity).to.deep.equal({ loginId: 'alice', groups: ['r1', 'r2'], subjectId: null });
      const both = unsignedJwt({ 'realm_access.roles': 'top', realm_access: { roles: ['r1'] } });
      expect((await nested.read({ [USER_HEADER]: 'alice', [H.jwt]: both })).identity).to.deep.equal({ loginId: 'alice', groups: ['top'], subjectId: null });
    } finally {
      await nested.close();
    }
  });

  describe('the client-ID claim (SERVICE_OIDC_JWT_CLIENT_ID, default aud)', () => {
    it('is not looked at without SERVICE_OIDC_CLIENT_ID', async () => {
      expect((await s.read({ [USER_HEADER]: 'alice', [H.jwt]: unsignedJwt({ aud: 'someone-else', sub: 's' }) })).status).to.equal(200);
    });

    it('must contain SERVICE_OIDC_CLIENT_ID when that is set: a token issued for another client is refused (401)', async () => {
      const checked = await identityServer({ ...JWT_ENV, SERVICE_OIDC_CLIENT_ID: 'metadata-ui' });
      try {
        const read = (claims: Record<string, unknown>) => checked.read({ [USER_HEADER]: 'alice', [H.jwt]: unsignedJwt(claims) });
        expect((await read({ aud: 'metadata-ui' })).status).to.equal(200);
        expect((await read({ aud: ['other', 'metadata-ui'] })).status).to.equal(200);
        expect((await read({ aud: 'other' })).status).to.equal(401);
        expect((await read({ aud: ['other'] })).status).to.equal(401);
        expect((await read({})).status).to.equal(401);
        // Without an injected JWT there is nothing to check: the headers alone are the proxy's word.
        expect((await checked.read({ [USER_HEADER]: 'alice' })).status).to.equal(200);
      } finally {
        await checked.close();
      }
      const azp = await identityServer({ ...JWT_ENV, SERVICE_OIDC_CLIENT_ID: 'metadata-ui', SERVICE_OIDC_JWT_CLIENT_ID: 'azp' });
      try {
        expect((await azp.read({ [USER_HEADER]: 'alice', [H.jwt]: unsignedJwt({ azp: 'metadata-ui', aud: 'other' }) })).status).to.equal(200);
        expect((await azp.read({ [USER_HEADER]: 'alice', [H.jwt]: unsignedJwt({ azp: 'other', aud: 'metadata-ui' }) })).status).to.equal(401);
      } finally {
        await azp.close();
      }
    });
  });
});

describe('pre-authentication: the injected JWT through the service', () => {
  let t: TestService;
  let db: string;
  const jwtSecretLike = unsignedJwt({ ...FULL_CLAIMS, marker: 'jwt-marker-7f3a' });

  before(async () => {
    t = await startService(JWT_ENV);
    db = await createDatabaseAs(t, ADMIN.loginId);
    for (const label of ['Alpha', 'Second']) await createTenantAs(t, db, ADMIN.loginId, label);
    await createUserAs(t, db, ADMIN.loginId, { loginId: 'both', accessLevel: 'EDITOR', tenant: 'Default' });
    await createUserAs(t, db, ADMIN.loginId, { loginId: 'both', accessLevel: 'READ_ONLY', tenant: 'Alpha' });
    await createUserAs(t, db, ADMIN.loginId, { loginId: 'both', accessLevel: 'ADMINISTRATOR', tenant: 'Second' });
  });
  after(() => t?.close());

  it('takes the tenant-name claim when the tenant-name header is empty, and the header when it has a value', async () => {
    expect((await sessionOf(t, db, 'both')).tenantLabel).to.equal('Default');
    expect(await sessionOf(t, db, 'both', { [H.jwt]: unsignedJwt({ tenant: 'Alpha' }) })).to.include({ tenantLabel: 'Alpha', accessLevel: 'READ_ONLY' });
    expect(await sessionOf(t, db, 'both', { [H.jwt]: unsignedJwt({ tenant: 'Alpha' }), [H.tenantName]: 'Second' })).to.include({ tenantLabel: 'Second', accessLevel: 'ADMINISTRATOR' });
    expect((await sessionOf(t, db, 'both', { [H.jwt]: unsignedJwt({ tenant: 'Alpha' }), 'service-tenant': 'Default' })).tenantLabel).to.equal('Default');
  });

  it('signs no one in by the JWT alone, whatever user it names (401)', async () => {
    for (const claims of [FULL_CLAIMS, { sub: ADMIN.loginId, preferred_username: ADMIN.loginId, name: ADMIN.loginId, upn: ADMIN.loginId }]) {
      const r = await t.request(`/api/${db}/session`, proxied(undefined, { [H.jwt]: unsignedJwt(claims) }));
      expect(r.status).to.equal(401);
      expect((await t.request(`/rest/${db}/schemes`, proxied(undefined, { [H.jwt]: unsignedJwt(claims) }))).status).to.equal(401);
    }
  });

  it('lets no caller without a user in on the JWT\'s claims while the tenant has no access rules (403)', async () => {
    // The tenant has no rules here; rules that let such callers in by these groups: access-rules.spec.ts.
    expect((await t.request(`/api/${db}/session`, proxied('stranger', { [H.jwt]: unsignedJwt(FULL_CLAIMS) }))).status).to.equal(403);
    expect((await t.request(`/api/${db}/session`, proxied('stranger', { [H.groups]: 'other', [H.jwt]: unsignedJwt(FULL_CLAIMS) }))).status).to.equal(403);
  });

  it('answers a malformed JWT with 401, not 500, without echoing it', async () => {
    const malformed = 'eyJhbGciOiJub25lIn0.not-json-marker-91c2.';
    const r = await t.request(`/api/${db}/session`, proxied('both', { [H.jwt]: malformed }));
    expect(r.status).to.equal(401);
    expect(await r.text()).to.not.contain('not-json-marker');
    expect(logLines.some((l) => l.includes('not-json-marker'))).to.equal(false);
  });

  it('keeps the JWT out of responses and log lines', async () => {
    const r = await t.request(`/api/${db}/session`, proxied('both', { [H.jwt]: jwtSecretLike }));
    expect(r.status).to.equal(200);
    expect(await r.text()).to.not.contain('jwt-marker').and.not.contain(jwtSecretLike.split('.')[1]);
    const denied = await t.request(`/api/${db}/session`, proxied('stranger', { [H.jwt]: jwtSecretLike }));
    expect(await denied.text()).to.not.contain(jwtSecretLike.split('.')[1]);
    expect(logLines.some((l) => l.includes(jwtSecretLike.split('.')[1]) || l.includes('jwt-marker'))).to.equal(false);
  });
});
