/** The settings of pre-authentication and of the logout address: defaults, the deprecated alias, and refusals at start. */
import { expect } from 'chai';
import { ConfigError } from '../../../runtime/config.ts';
import { ADMIN, logLines, startService } from '../../helpers/service.ts';
import { createDatabaseAs, createUserAs, PREAUTH_ENV, proxied } from './helpers.ts';

/** Starts the service with `env` and returns the ConfigError it must stop with. */
async function refused(env: Record<string, string>): Promise<ConfigError> {
  let service;
  try {
    service = await startService(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return err as ConfigError;
  }
  await service.close();
  throw new Error(`the service started with ${JSON.stringify(env)}`);
}

describe('pre-authentication: configuration', () => {
  it('refuses pre-authentication without the login-ID header, naming SERVICE_REMOTE_USER_ID', async () => {
    for (const env of <Record<string, string>[]>[{ SERVICE_PRE_AUTHENTICATION: 'true' }, { SERVICE_PRE_AUTHENTICATION: 'true', SERVICE_REMOTE_USER_ID: '' }]) {
      const err = await refused(env);
      expect(err.setting).to.equal('SERVICE_REMOTE_USER_ID');
      expect(err.message).to.contain('SERVICE_REMOTE_USER_ID');
    }
  });

  it('refuses header names that are not HTTP token names, naming the setting', async () => {
    const cases: [string, string][] = [
      ['SERVICE_REMOTE_USER_ID', 'X Remote User'], ['SERVICE_REMOTE_USER_ID', 'X-Remote-User:'], ['SERVICE_REMOTE_USER_ID', '  '],
      ['SERVICE_REMOTE_USER', 'Über'], ['SERVICE_REMOTE_USER_GROUP_ID', 'groups,more'], ['SERVICE_REMOTE_USER_TENANT_ID', 'a/b'],
      ['SERVICE_REMOTE_USER_FAMILY_NAME', 'family name'], ['SERVICE_REMOTE_USER_GIVEN_NAME', '(given)'],
      ['SERVICE_REMOTE_USER_TENANT_NAME', 'tenant\tname'], ['SERVICE_REMOTE_USER_OIDC_JWT', 'jwt;x'], ['SERVICE_API_KEY', 'key=1'],
    ];
    for (const [setting, value] of cases) {
      const err = await refused({ ...PREAUTH_ENV, SERVICE_API_KEY: 'X-Api-Key', SERVICE_API_KEY_TOKEN: 'token-1', [setting]: value });
      expect(err.setting, `${setting}=${value}`).to.equal(setting);
    }
  });

  it('refuses claim names with blanks, naming the setting', async () => {
    for (const setting of ['SERVICE_OIDC_JWT_SUB_ID', 'SERVICE_OIDC_JWT_GROUP_ID', 'SERVICE_OIDC_JWT_CLIENT_ID', 'SERVICE_OIDC_JWT_TENANT_NAME']) {
      expect((await refused({ ...PREAUTH_ENV, [setting]: 'two words' })).setting).to.equal(setting);
    }
  });

  it('refuses a token without its header and a header without its token: a half set-up gate', async () => {
    const noHeader = await refused({ ...PREAUTH_ENV, SERVICE_API_KEY_TOKEN: 'a-token-value-9' });
    expect(noHeader.setting).to.equal('SERVICE_API_KEY');
    expect(noHeader.message).to.contain('SERVICE_API_KEY_TOKEN').and.not.contain('a-token-value-9');
    expect((await refused({ ...PREAUTH_ENV, SERVICE_API_KEY: 'X-Api-Key' })).setting).to.equal('SERVICE_API_KEY_TOKEN');
  });

  it('refuses a token a client could not send back unchanged, without showing it', async () => {
    for (const token of [' leading-blank', 'trailing-blank ', 'non-ascii-ä', 'line\nbreak']) {
      const err = await refused({ ...PREAUTH_ENV, SERVICE_API_KEY: 'X-Api-Key', SERVICE_API_KEY_TOKEN: token });
      expect(err.setting).to.equal('SERVICE_API_KEY_TOKEN');
      expect(err.message).to.not.contain(token.trim());
    }
  });

  it('refuses pre-authentication together with the directory or OpenID Connect, and a value other than true or false', async () => {
    expect((await refused({ ...PREAUTH_ENV, SERVICE_JNDI_AUTHENTICATION: 'true' })).setting).to.equal('SERVICE_PRE_AUTHENTICATION');
    expect((await refused({ ...PREAUTH_ENV, SERVICE_OIDC_AUTHENTICATION: 'true' })).setting).to.equal('SERVICE_PRE_AUTHENTICATION');
    expect((await refused({ ...PREAUTH_ENV, SERVICE_PRE_AUTHENTICATION: 'yes' })).setting).to.equal('SERVICE_PRE_AUTHENTICATION');
  });

  it('refuses a logout address that is neither an http(s) URL nor a path, for every method', async () => {
    for (const url of ['javascript:alert(1)', 'logout', 'https://', '//evil.example/logout', 'https://sso.example/logout?x=a b']) {
      expect((await refused({ ...PREAUTH_ENV, SERVICE_LOGOUT_URL: url })).setting, url).to.equal('SERVICE_LOGOUT_URL');
      expect((await refused({ SERVICE_LOGOUT_URL: url })).setting, url).to.equal('SERVICE_LOGOUT_URL');
    }
  });

  it('does not read the method\'s settings while it is off: the password method runs', async () => {
    const t = await startService({ SERVICE_PRE_AUTHENTICATION: 'false', SERVICE_REMOTE_USER_ID: 'not a header name', SERVICE_API_KEY_TOKEN: 'unused-1' });
    try {
      expect((await t.request('/api/admin/databases')).status).to.equal(200);
      expect((await t.request('/api/admin/databases', proxied(ADMIN.loginId, { 'not-a-header-name': ADMIN.loginId }))).status).to.equal(401);
    } finally {
      await t.close();
    }
  });
});

describe('pre-authentication: the deprecated SERVICE_REMOTE_USER', () => {
  it('names the login-ID header when SERVICE_REMOTE_USER_ID is not set, with a warning at start', async () => {
    const before = logLines.length;
    const t = await startService({ SERVICE_PRE_AUTHENTICATION: 'true', SERVICE_REMOTE_USER: 'X-Old-User' });
    try {
      expect(logLines.slice(before).some((l) => l.includes('SERVICE_REMOTE_USER is deprecated'))).to.equal(true);
      expect((await t.request('/api/admin/databases', proxied(ADMIN.loginId))).status).to.equal(401);
      const r = await t.request('/api/admin/databases', { auth: null, headers: { 'X-Old-User': ADMIN.loginId } });
      expect(r.status).to.equal(200);
    } finally {
      await t.close();
    }
  });

  it('gives way to SERVICE_REMOTE_USER_ID when both are set', async () => {
    const before = logLines.length;
    const t = await startService({ ...PREAUTH_ENV, SERVICE_REMOTE_USER: 'X-Old-User' });
    try {
      expect(logLines.slice(before).some((l) => l.includes('deprecated'))).to.equal(false);
      const db = await createDatabaseAs(t, ADMIN.loginId);
      await createUserAs(t, db, ADMIN.loginId, { loginId: 'reader' });
      expect((await t.request(`/rest/${db}/schemes`, { auth: null, headers: { 'X-Old-User': 'reader' } })).status).to.equal(401);
      expect((await t.request(`/rest/${db}/schemes`, proxied('reader'))).status).to.equal(200);
      // The old header does not replace or confuse the new one either.
      expect((await t.request(`/api/${db}/session`, proxied('reader', { 'X-Old-User': ADMIN.loginId }))).status).to.equal(200);
      expect((await (await t.request(`/api/${db}/session`, proxied('reader', { 'X-Old-User': ADMIN.loginId }))).json()).loginId).to.equal('reader');
    } finally {
      await t.close();
    }
  });
});
