/**
 * The settings of method 4: a missing or malformed one stops the start with
 * a ConfigError naming it, before the service listens.
 */
import { expect } from 'chai';
import { ConfigError } from '../../../runtime/config.ts';
import { startService } from '../../helpers/service.ts';
import { manifest } from '../../../plugins/auth-oidc/index.ts';
import { isLoopback, providerUrl, readSettings } from '../../../plugins/auth-oidc/settings.ts';
import { checkPluginConfig } from '../../../runtime/plugins.ts';
import { freePort } from '../../helpers/oidc-provider.ts';
import { oidcEnv } from './helpers.ts';

const PROVIDER = 'https://login.example.com/realms/metadata';

async function startFailure(env: Record<string, string | undefined>): Promise<ConfigError> {
  try {
    const t = await startService(env);
    await t.close();
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('the service started');
}

describe('OpenID Connect: settings', function () {
  this.timeout(60_000);

  for (const setting of ['SERVICE_OIDC_CLIENT_ID', 'SERVICE_OIDC_PROVIDER_URL', 'SERVICE_OIDC_JWT_USER_ID']) {
    it(`refuses to start without ${setting}, naming it`, async () => {
      for (const value of [undefined, '', '  ']) {
        const err = await startFailure({ ...oidcEnv(PROVIDER), [setting]: value });
        expect(err.setting, JSON.stringify(value)).to.equal(setting);
      }
    });
  }

  it('refuses a provider URL that is not https, except on loopback hosts', async () => {
    // Two through a whole start; the rest below, where the check is.
    for (const url of ['http://login.example.com', 'https://user:pw@login.example.com']) {
      const err = await startFailure(oidcEnv(url));
      expect(err.setting, url).to.equal('SERVICE_OIDC_PROVIDER_URL');
    }
    for (const url of ['http://10.0.0.5:8080/realms/x', 'ftp://login.example.com', 'login.example.com', 'https://', 'https://login.example.com/?x=1', 'https://login.example.com/#f', 'https://:pw@login.example.com']) {
      expect(() => providerUrl(url), url).to.throw(ConfigError).with.property('setting', 'SERVICE_OIDC_PROVIDER_URL');
    }
  });

  it('refuses malformed claim names and switches', async () => {
    expect((await startFailure(oidcEnv(PROVIDER, { SERVICE_OIDC_JWT_GROUP_ID: 'two words' }))).setting).to.equal('SERVICE_OIDC_JWT_GROUP_ID');
    expect((await startFailure(oidcEnv(PROVIDER, { SERVICE_OIDC_JWT_CLIENT_ID: 'a b' }))).setting).to.equal('SERVICE_OIDC_JWT_CLIENT_ID');
    expect((await startFailure(oidcEnv(PROVIDER, { SERVICE_OIDC_AUTHENTICATION: 'yes' }))).setting).to.equal('SERVICE_OIDC_AUTHENTICATION');
    expect((await startFailure(oidcEnv(PROVIDER, { SERVICE_AUTH_CACHE_TTL: '-1' }))).setting).to.equal('SERVICE_AUTH_CACHE_TTL');
  });

  it('cannot be combined with pre-authentication', async () => {
    const err = await startFailure({ ...oidcEnv(PROVIDER), SERVICE_PRE_AUTHENTICATION: 'true', SERVICE_REMOTE_USER_ID: 'X-User' });
    expect(err.setting).to.equal('SERVICE_PRE_AUTHENTICATION');
  });

  it('starts with any provider name, an https provider it cannot reach, and every optional claim', async () => {
    // On loopback, so the failing fetch fails at once (this machine resolves no outside names).
    const t = await startService(oidcEnv(`https://127.0.0.1:${await freePort()}/realms/metadata`, { SERVICE_OIDC_PROVIDER_NAME: 'any value at all', SERVICE_OIDC_JWT_CLIENT_ID: 'azp' }));
    try {
      expect((await t.request('/health', { auth: null })).status).to.equal(200);
      const r = await t.request('/api/admin/databases', { auth: null });
      expect(r.status).to.equal(401);
      expect(r.headers.get('www-authenticate')).to.equal('Bearer realm="metadata"');
    } finally {
      await t.close();
    }
  });

  it('leaves the OIDC settings alone while the method is off: password login as before, no Bearer challenge', async () => {
    const t = await startService({ SERVICE_OIDC_PROVIDER_URL: 'not even a URL', SERVICE_OIDC_AUTHENTICATION: 'false' });
    try {
      expect((await t.request('/api/admin/databases')).status).to.equal(200);
      const r = await t.request('/api/admin/databases', { auth: null, headers: { authorization: 'Bearer a.b.c' } });
      expect(r.status).to.equal(401);
      expect(r.headers.get('www-authenticate') ?? '').to.not.match(/bearer/i);
    } finally {
      await t.close();
    }
  });

  describe('readSettings', () => {
    /** What the driver gets from an operator's settings: checked, converted and defaulted by the schema first, as at start. */
    const settingsOf = (env: Record<string, string | undefined>) => readSettings(checkPluginConfig(manifest, env));

    it('reads every claim name, defaults the client-ID claim to aud, and strips the trailing slash of the provider URL', () => {
      const s = settingsOf({ ...oidcEnv(`${PROVIDER}/`), SERVICE_AUTH_CACHE_TTL: '2500' });
      expect(s.providerUrl).to.equal(PROVIDER);
      expect(s.clientId).to.equal('metadata-service');
      expect(s.cacheTtlMs).to.equal(2500);
      expect(s.claims).to.deep.equal({
        loginId: 'login_id', subjectId: 'sub', groups: 'groups', tenantId: 'tenant_id', clientId: 'aud',
        userName: 'name', familyName: 'family_name', givenName: 'given_name', tenantName: 'tenant_name',
      });
      expect(settingsOf({ ...oidcEnv(PROVIDER), SERVICE_OIDC_JWT_CLIENT_ID: 'azp', SERVICE_OIDC_JWT_SUB_ID: '' }).claims).to.include({ clientId: 'azp', subjectId: undefined });
    });

    it('allows http only for loopback hosts', () => {
      for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '[::1]']) {
        expect(isLoopback(new URL(`http://${host}:8080`).hostname), host).to.equal(true);
        expect(providerUrl(`http://${host}:8080/realms/a/`)).to.equal(`http://${host}:8080/realms/a`);
      }
      for (const host of ['localhost.example.com', '128.0.0.1', '0.0.0.0', '[::2]', '127.0.0.1.nip.io']) {
        expect(isLoopback(new URL(`http://${host}`).hostname), host).to.equal(false);
        expect(() => providerUrl(`http://${host}`)).to.throw(ConfigError);
      }
    });
  });
});
