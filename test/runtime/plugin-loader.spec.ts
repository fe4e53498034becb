/**
 * The loader's decisions before anything is opened: host versions, which
 * plugins are on (by their sign-in methods' switches), dependency order
 * among those only, unknown settings under a plugin's prefix, and typed
 * settings.
 */
import { expect } from 'chai';
import { PLUGINS } from '../../plugins/index.ts';
import { ConfigError } from '../../runtime/config.ts';
import { methodsOn } from '../../runtime/auth/methods.ts';
import { loadPlugins } from '../../runtime/plugin-loader.ts';
import { PluginError, type PluginManifest, type SignInMethod } from '../../runtime/plugins.ts';
import { HOST_API_VERSION } from '../../runtime/host-version.ts';

const plugin = (name: string, more: Partial<PluginManifest> = {}): PluginManifest => ({ name, host: '^1', register: () => undefined, ...more });
const names = (env: Record<string, string>, offered: PluginManifest[]) => loadPlugins(offered, env).plugins.map((p) => p.manifest.name);

describe('plugin loader', () => {
  it('refuses a manifest without a host range or for another major version, naming the plugin and both versions', () => {
    expect(() => loadPlugins([plugin('old', { host: undefined as unknown as string })], {})).to.throw(PluginError, /^PLUGIN_INVALID: plugin old does not declare the host API version/);
    expect(() => loadPlugins([plugin('next', { host: '^2' })], {})).to.throw(PluginError, `PLUGIN_HOST_VERSION: plugin next was written for host API ^2; this service offers host API ${HOST_API_VERSION}`);
    expect(() => loadPlugins([plugin('ranged', { host: '>=1.0.0 <1.0.0' })], {})).to.throw(PluginError, /PLUGIN_HOST_VERSION/);
    expect(names({}, [plugin('any-1', { host: '1.x' }), plugin('exact', { host: HOST_API_VERSION })])).to.deep.equal(['any-1', 'exact']);
    // A newer minor version of the host still serves a plugin written for ^1.0.
    expect(names({}, [plugin('minor', { host: '^1.0' })])).to.deep.equal(['minor']);
    expect(() => loadPlugins([plugin('later', { host: '^1.1' })], {}, '1.0.0')).to.throw(PluginError, /written for host API \^1\.1; this service offers host API 1\.0\.0/);
  });

  it('orders only the plugins that are on: a dependency switched off is missing', () => {
    const base = plugin('base', { method: { name: 'base', on: { setting: 'SERVICE_BASE_AUTHENTICATION' }, phase: 'credentials' } });
    const user = plugin('user', { dependencies: ['base'] });
    expect(names({ SERVICE_BASE_AUTHENTICATION: 'true' }, [user, base])).to.deep.equal(['base', 'user']);
    expect(() => loadPlugins([user, base], {})).to.throw(PluginError, 'PLUGIN_MISSING_DEPENDENCY: plugin user needs base, which is not installed or not switched on');
  });

  it('stops on an unknown setting under the prefix of a plugin that is on, and only then', () => {
    const typo = plugin('typo', { settingsPrefixes: ['SERVICE_TYPO_'], configSchema: { type: 'object', properties: { SERVICE_TYPO_LIMIT: { type: 'integer' } } } });
    expect(() => loadPlugins([typo], { SERVICE_TYPO_LIMT: '3' })).to.throw(ConfigError, /^SERVICE_TYPO_LIMT: is not a setting of plugin typo/);
    expect(names({ SERVICE_TYPO_LIMIT: '3' }, [typo])).to.deep.equal(['typo']);
    const off = plugin('off', { settingsPrefixes: ['SERVICE_OFF_'], enabled: () => false });
    expect(names({ SERVICE_OFF_WHATEVER: 'x' }, [off])).to.deep.equal([]);
    // The built-ins claim no setting the core or another plugin reads.
    expect(() => loadPlugins(PLUGINS, { SERVICE_AUTH_CACHE_TTL: '1', SERVICE_ACCESS_RULES: 'true', SERVICE_QUERY_BULK_RATE: '0', SERVICE_OIDC_JWT_SUB_ID: 'sub', SERVICE_ADMIN_USER: 'a' })).to.not.throw();
    expect(() => loadPlugins(PLUGINS, { SERVICE_QUERY_POOLSIZE: '3' })).to.throw(ConfigError, /^SERVICE_QUERY_POOLSIZE: is not a setting of plugin query/);
  });

  it('hands register settings converted and defaulted by the schema', () => {
    const [query] = loadPlugins(PLUGINS, { SERVICE_QUERY_POOL_SIZE: '7', SERVICE_JOB_HEARTBEAT: '500' }).plugins.filter((p) => p.manifest.name === 'query');
    expect(query.settings).to.include({ SERVICE_QUERY_POOL_SIZE: 7, SERVICE_JOB_HEARTBEAT: 500, SERVICE_QUERY_JOB_CONCURRENCY: 2, SERVICE_DATABASE_READONLY_USER: 'service_readonly' });
    expect(query.settings).to.not.have.property('SERVICE_ADMIN_USER');
    expect(() => loadPlugins(PLUGINS, { SERVICE_QUERY_POOL_SIZE: '100' })).to.throw(ConfigError, 'SERVICE_QUERY_POOL_SIZE: must be a whole number from 1 to 99 (plugin query)');
  });

  it('hands the sign-in plugins their settings typed and defaulted, and declares a setting several read the same in each', () => {
    const directoryAndOidc = {
      SERVICE_JNDI_AUTHENTICATION: 'true', SERVICE_JNDI_URL: 'ldap://directory.example.org', SERVICE_JNDI_USER: 'cn=search', SERVICE_JNDI_PASSWORD: 'search-Secret-1',
      SERVICE_JNDI_READ_TIMEOUT: '2500', SERVICE_OIDC_AUTHENTICATION: 'true', SERVICE_OIDC_CLIENT_ID: 'metadata-service',
      SERVICE_OIDC_PROVIDER_URL: 'https://login.example.com', SERVICE_OIDC_JWT_USER_ID: 'preferred_username', SERVICE_AUTH_CACHE_TTL: '2500',
    };
    const settingsOf = (env: Record<string, string>) => Object.fromEntries(loadPlugins(PLUGINS, env).plugins.map((p) => [p.manifest.name, p.settings]));
    const loaded = settingsOf(directoryAndOidc);
    expect(loaded['auth-ldap']).to.include({ SERVICE_JNDI_READ_TIMEOUT: 2500, SERVICE_JNDI_CONNECT_TIMEOUT: 5000, SERVICE_JNDI_FILTER: 'uid={0}', SERVICE_AUTH_CACHE_TTL: 2500 });
    expect(loaded['auth-oidc']).to.include({ SERVICE_OIDC_JWT_CLIENT_ID: 'aud', SERVICE_AUTH_CACHE_TTL: 2500 });
    expect(settingsOf({ SERVICE_PRE_AUTHENTICATION: 'true', SERVICE_REMOTE_USER_ID: 'X-User' })['auth-preauth'])
      .to.deep.equal({ SERVICE_REMOTE_USER_ID: 'X-User', SERVICE_OIDC_JWT_CLIENT_ID: 'aud' });
    // Password, directory and bearer sign-ins all remember for SERVICE_AUTH_CACHE_TTL: one definition, so no plugin accepts what another refuses.
    const ttl = PLUGINS.flatMap((p) => (p.configSchema as { properties?: Record<string, object> } | undefined)?.properties?.SERVICE_AUTH_CACHE_TTL ?? []);
    expect(ttl).to.have.length(3);
    for (const schema of ttl) expect(schema).to.deep.equal(ttl[0]);
    expect(() => loadPlugins(PLUGINS, { ...directoryAndOidc, SERVICE_AUTH_CACHE_TTL: '1000000000' }))
      .to.throw(ConfigError, /^SERVICE_AUTH_CACHE_TTL: must be a whole number of milliseconds from 0 to 999999999 \(plugin auth-\w+\)$/);
  });

  describe('sign-in methods from their declarations', () => {
    const declared = PLUGINS.flatMap((p) => (p.method ? [p.method] : []));
    const gateway: SignInMethod = { name: 'gateway', on: { setting: 'SERVICE_GATEWAY_AUTHENTICATION' }, phase: 'credentials' };

    it('have password sign-in on only while no switched method is, a third party\'s included', () => {
      expect([...methodsOn(declared, {})].sort()).to.deep.equal(['accessKey', 'basic']);
      expect([...methodsOn(declared, { SERVICE_JNDI_AUTHENTICATION: 'true', SERVICE_OIDC_AUTHENTICATION: 'true' })].sort()).to.deep.equal(['accessKey', 'directory', 'oidc']);
      expect([...methodsOn([...declared, gateway], { SERVICE_GATEWAY_AUTHENTICATION: 'true' })].sort()).to.deep.equal(['accessKey', 'gateway']);
    });

    it('refuse pre-authentication beside the directory or OpenID Connect with the messages they always had', () => {
      expect(() => methodsOn(declared, { SERVICE_PRE_AUTHENTICATION: 'true', SERVICE_JNDI_AUTHENTICATION: 'true' })).to.throw(ConfigError,
        'SERVICE_PRE_AUTHENTICATION: cannot be combined with SERVICE_JNDI_AUTHENTICATION: with pre-authentication the proxy signs users in, and login ID and password are not accepted');
      expect(() => methodsOn(declared, { SERVICE_PRE_AUTHENTICATION: 'true', SERVICE_OIDC_AUTHENTICATION: 'TRUE' })).to.throw(ConfigError,
        'SERVICE_PRE_AUTHENTICATION: cannot be combined with SERVICE_OIDC_AUTHENTICATION: with pre-authentication the proxy signs users in; pass the identity provider\'s token in SERVICE_REMOTE_USER_OIDC_JWT instead');
      expect(() => methodsOn(declared, { SERVICE_JNDI_AUTHENTICATION: 'yes' })).to.throw(ConfigError, /^SERVICE_JNDI_AUTHENTICATION: must be true or false/);
      expect(() => methodsOn([...declared, { ...gateway, name: 'basic' }], {})).to.throw(PluginError, /sign-in method basic is declared twice/);
    });
  });
});
