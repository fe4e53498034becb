import { expect } from 'chai';
import { ConfigError } from '../../../runtime/config.ts';
import { DEFAULT_TIMEOUT_MS, parseDirectorySettings } from '../../../plugins/auth-ldap/settings.ts';
import { manifest } from '../../../plugins/auth-ldap/index.ts';
import { methodsOn } from '../../../runtime/auth/methods.ts';
import { checkPluginConfig } from '../../../runtime/plugins.ts';
import { startService } from '../../helpers/service.ts';

const BASE = {
  SERVICE_JNDI_AUTHENTICATION: 'true',
  SERVICE_JNDI_URL: 'ldap://directory.example.org:389',
  SERVICE_JNDI_USER: 'cn=search,dc=example,dc=org',
  SERVICE_JNDI_PASSWORD: 'search-Secret-1',
};

/** What the directory gets from an operator's settings: checked, converted and defaulted by the schema first, as at start. */
function settingsOf(env: Record<string, string | undefined>) {
  return parseDirectorySettings(checkPluginConfig(manifest, env));
}

/** The setting a ConfigError names, or fails. */
function refused(env: Record<string, string | undefined>): { setting: string; message: string } {
  try {
    settingsOf(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return { setting: (err as ConfigError).setting, message: (err as ConfigError).message };
  }
  expect.fail(`accepted ${JSON.stringify(env)}`);
}

describe('auth-ldap settings', () => {
  it('has the specification\'s defaults: filter uid={0}, the standard factory, no attributes, no context', () => {
    const s = settingsOf(BASE);
    expect(s).to.deep.equal({
      url: 'ldap://directory.example.org:389',
      searchUser: BASE.SERVICE_JNDI_USER,
      searchPassword: BASE.SERVICE_JNDI_PASSWORD,
      searchBase: '',
      filter: '(uid={0})',
      attributes: {},
      connectTimeoutMs: DEFAULT_TIMEOUT_MS,
      timeoutMs: DEFAULT_TIMEOUT_MS,
    });
  });

  it('reads every setting of the table', () => {
    const s = settingsOf({
      ...BASE,
      SERVICE_JNDI_FACTORY: 'com.sun.jndi.ldap.LdapCtxFactory',
      SERVICE_JNDI_URL: 'ldaps://directory.example.org',
      SERVICE_JNDI_CONTEXT: 'ou=people,dc=example,dc=org',
      SERVICE_JNDI_FILTER: '(&(objectClass=inetOrgPerson)(|(uid={0})(mail={0})))',
      SERVICE_JNDI_GROUP_ID: 'memberOf',
      SERVICE_JNDI_TENANT_ID: 'departmentNumber',
      SERVICE_JNDI_COMMON_NAME: 'cn',
      SERVICE_JNDI_FAMILY_NAME: 'sn',
      SERVICE_JNDI_GIVEN_NAME: 'givenName',
      SERVICE_JNDI_TENANT_NAME: 'o',
      SERVICE_JNDI_CONNECT_TIMEOUT: '1500',
      SERVICE_JNDI_READ_TIMEOUT: '2500',
    });
    expect(s.url).to.equal('ldaps://directory.example.org');
    expect(s.searchBase).to.equal('ou=people,dc=example,dc=org');
    expect(s.filter).to.equal('(&(objectClass=inetOrgPerson)(|(uid={0})(mail={0})))');
    expect(s.attributes).to.deep.equal({
      groups: 'memberOf', tenantId: 'departmentNumber', commonName: 'cn', familyName: 'sn', givenName: 'givenName', tenantName: 'o',
    });
    expect(s.connectTimeoutMs).to.equal(1500);
    expect(s.timeoutMs).to.equal(2500);
  });

  it('resolves the context below a name in the URL, as JNDI does', () => {
    const s = settingsOf({ ...BASE, SERVICE_JNDI_URL: 'ldap://h:10389/dc=example,dc=org', SERVICE_JNDI_CONTEXT: 'ou=people' });
    expect(s.url).to.equal('ldap://h:10389');
    expect(s.searchBase).to.equal('ou=people,dc=example,dc=org');
    const encoded = settingsOf({ ...BASE, SERVICE_JNDI_URL: 'ldap://h/o=M%C3%BCller%20AG' });
    expect(encoded.searchBase).to.equal('o=Müller AG');
  });

  it('keeps the search password as given, blanks included', () => {
    expect(settingsOf({ ...BASE, SERVICE_JNDI_PASSWORD: ' pass word ' }).searchPassword).to.equal(' pass word ');
  });

  const refusals: [string, Record<string, string | undefined>, string, RegExp][] = [
    ['no URL', { SERVICE_JNDI_URL: undefined }, 'SERVICE_JNDI_URL', /required/],
    ['a blank URL', { SERVICE_JNDI_URL: '  ' }, 'SERVICE_JNDI_URL', /required/],
    ['an http URL', { SERVICE_JNDI_URL: 'http://directory.example.org' }, 'SERVICE_JNDI_URL', /ldap:\/\/ or ldaps:\/\//],
    ['no URL at all', { SERVICE_JNDI_URL: 'directory.example.org' }, 'SERVICE_JNDI_URL', /ldap:\/\/ or ldaps:\/\//],
    ['credentials in the URL', { SERVICE_JNDI_URL: 'ldap://cn=x:pw@h' }, 'SERVICE_JNDI_URL', /./],
    ['URL extensions', { SERVICE_JNDI_URL: 'ldap://h/dc=x?cn?sub' }, 'SERVICE_JNDI_URL', /extensions/],
    ['no search user', { SERVICE_JNDI_USER: undefined }, 'SERVICE_JNDI_USER', /required/],
    ['no search password', { SERVICE_JNDI_PASSWORD: undefined }, 'SERVICE_JNDI_PASSWORD', /unauthenticated binds/],
    ['an empty search password', { SERVICE_JNDI_PASSWORD: '' }, 'SERVICE_JNDI_PASSWORD', /unauthenticated binds/],
    ['a filter without {0}', { SERVICE_JNDI_FILTER: 'uid=alice' }, 'SERVICE_JNDI_FILTER', /\{0\}/],
    ['a filter that does not parse', { SERVICE_JNDI_FILTER: '(&(uid={0})' }, 'SERVICE_JNDI_FILTER', /RFC 4515/],
    ['a filter with a stray parenthesis', { SERVICE_JNDI_FILTER: 'uid={0})' }, 'SERVICE_JNDI_FILTER', /pair up/],
    ['another context factory', { SERVICE_JNDI_FACTORY: 'com.example.OtherCtxFactory' }, 'SERVICE_JNDI_FACTORY', /LdapCtxFactory/],
    ['an attribute name with blanks', { SERVICE_JNDI_GROUP_ID: 'member of' }, 'SERVICE_JNDI_GROUP_ID', /attribute name/],
    ['an attribute name with a filter', { SERVICE_JNDI_TENANT_NAME: 'o)(uid=*' }, 'SERVICE_JNDI_TENANT_NAME', /attribute name/],
    ['a timeout that is no number', { SERVICE_JNDI_READ_TIMEOUT: '5s' }, 'SERVICE_JNDI_READ_TIMEOUT', /milliseconds/],
    ['a zero connect timeout', { SERVICE_JNDI_CONNECT_TIMEOUT: '0' }, 'SERVICE_JNDI_CONNECT_TIMEOUT', /milliseconds/],
    ['a read timeout beyond ten minutes', { SERVICE_JNDI_READ_TIMEOUT: '600001' }, 'SERVICE_JNDI_READ_TIMEOUT', /from 1 to 600000/],
    ['a negative cache time', { SERVICE_AUTH_CACHE_TTL: '-1' }, 'SERVICE_AUTH_CACHE_TTL', /milliseconds/],
  ];
  for (const [what, change, setting, message] of refusals) {
    it(`refuses ${what}, naming ${setting}`, () => {
      const r = refused({ ...BASE, ...change });
      expect(r.setting).to.equal(setting);
      expect(r.message).to.match(message);
      // The search user's password is never part of a configuration message.
      expect(r.message).not.to.include(BASE.SERVICE_JNDI_PASSWORD);
    });
  }

  it('accepts an empty factory, OIDs as attribute names and a filter in parentheses of its own', () => {
    const s = settingsOf({ ...BASE, SERVICE_JNDI_FACTORY: '', SERVICE_JNDI_GROUP_ID: '2.5.4.11', SERVICE_JNDI_FILTER: '(sAMAccountName={0})' });
    expect(s.attributes.groups).to.equal('2.5.4.11');
    expect(s.filter).to.equal('(sAMAccountName={0})');
    // Blanks alone are no filter, as an empty value is none: the default.
    expect(settingsOf({ ...BASE, SERVICE_JNDI_FILTER: '  ' }).filter).to.equal('(uid={0})');
  });

  it('is switched on by SERVICE_JNDI_AUTHENTICATION alone', () => {
    const on = (env: Record<string, string>) => methodsOn([manifest.method!], env).has('directory');
    expect(on({})).to.equal(false);
    expect(on({ SERVICE_JNDI_AUTHENTICATION: 'false' })).to.equal(false);
    expect(on({ SERVICE_JNDI_AUTHENTICATION: 'true' })).to.equal(true);
  });

  describe('at the start of the service', () => {
    async function startError(env: Record<string, string | undefined>): Promise<ConfigError> {
      try {
        const t = await startService(env);
        await t.close();
      } catch (err) {
        expect(err).to.be.instanceOf(ConfigError);
        return err as ConfigError;
      }
      expect.fail('the service started');
    }

    it('does not start without a directory URL, naming the setting', async () => {
      const err = await startError({ SERVICE_JNDI_AUTHENTICATION: 'true', SERVICE_JNDI_USER: 'cn=s', SERVICE_JNDI_PASSWORD: 'pw-Secret-1' });
      expect(err.setting).to.equal('SERVICE_JNDI_URL');
    });

    it('does not start with a filter lacking {0}', async () => {
      const err = await startError({ ...BASE, SERVICE_JNDI_FILTER: '(objectClass=person)' });
      expect(err.setting).to.equal('SERVICE_JNDI_FILTER');
    });

    it('does not start with a malformed timeout, naming it', async () => {
      const err = await startError({ ...BASE, SERVICE_JNDI_CONNECT_TIMEOUT: 'soon' });
      expect(err.setting).to.equal('SERVICE_JNDI_CONNECT_TIMEOUT');
    });

    it('does not start together with pre-authentication', async () => {
      const err = await startError({ ...BASE, SERVICE_PRE_AUTHENTICATION: 'true', SERVICE_REMOTE_USER_ID: 'X-User' });
      expect(err.setting).to.equal('SERVICE_PRE_AUTHENTICATION');
    });

    it('does not start with SERVICE_JNDI_AUTHENTICATION that is not true or false', async () => {
      const err = await startError({ ...BASE, SERVICE_JNDI_AUTHENTICATION: 'yes' });
      expect(err.setting).to.equal('SERVICE_JNDI_AUTHENTICATION');
    });
  });
});
