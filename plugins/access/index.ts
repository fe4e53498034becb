/**
 * Access keys and access rules: the access-key driver (always on, every
 * method), the REST paths that manage keys and rules, and the tables that
 * keep them in every database. What the rules decide at sign-in is the
 * core's (runtime/auth/access-rules.ts), shared with the explain call here.
 */
import { accessRulesEnabled, AccessRuleStore, type PluginHost, type PluginManifest, type Principal } from '../../runtime/host.ts';
import { AccessKeyDriver, DEFAULT_CACHE_TTL_MS } from './driver.ts';
import { ACCESS_MIGRATIONS, AccessKeyStore } from './keys.ts';
import { handleAccessKeys } from './keys-rest.ts';
import { handleAccessRules } from './rules-rest.ts';
import { openapi } from './openapi.ts';

const BOOLEAN = { type: 'string', pattern: '^\\s*([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])\\s*$', description: 'true or false' };

interface AccessSettings {
  SERVICE_ACCESS_KEY_CACHE_TTL: number;
}

export const manifest: PluginManifest<AccessSettings> = {
  name: 'access',
  openapi,
  host: '^1',
  method: { name: 'accessKey', on: 'always', phase: 'access-key' },
  settingsPrefixes: ['SERVICE_ACCESS_'],
  configSchema: {
    type: 'object',
    properties: {
      SERVICE_ACCESS_RULES: BOOLEAN,
      SERVICE_GUEST_USERS: BOOLEAN,
      SERVICE_ACCESS_KEY_CACHE_TTL: { type: 'integer', minimum: 0, maximum: 9_999_999, default: DEFAULT_CACHE_TTL_MS, description: 'a whole number of milliseconds, at most 9999999' },
    },
  },
  migrations: { database: ACCESS_MIGRATIONS },
  messages: {
    en: {
      expiresInPast: 'The time must lie in the future.',
      organizationOnlyForCreate: 'Only a CREATE rule names an organization.',
      organizationNotFound: 'No top-level organization of this tenant has this label.',
    },
    de: {
      expiresInPast: 'Der Zeitpunkt muss in der Zukunft liegen.',
      organizationOnlyForCreate: 'Nur eine CREATE-Regel nennt eine Organisation.',
      organizationNotFound: 'Keine Organisation der obersten Ebene dieses Mandanten hat diesen Namen.',
    },
  },
  register(host: PluginHost, settings) {
    const keys = new AccessKeyStore(host.knex);
    const rules = new AccessRuleStore(host.knex);
    const driver = new AccessKeyDriver({
      keys, isSystemAdmin: (loginId) => host.directory.isSystemAdmin(loginId), log: host.log,
      cacheTtlMs: settings.SERVICE_ACCESS_KEY_CACHE_TTL,
    });
    host.addAuthDriver(driver);
    // A removed user, a changed access level or a removed tenant counts on this instance from the next request.
    host.onChange((_db, types) => {
      if (types.includes('User') || types.includes('Tenant')) driver.forget();
    });
    const keysDeps = { knex: host.knex, keys, directory: host.directory, revoked: () => driver.forget() };
    const rulesDeps = { knex: host.knex, rules, directory: host.directory, rulesEnabled: accessRulesEnabled(host.config.env), changed: (db: string) => host.changed(db, ['AccessRule']) };
    host.addRestExtension(async ({ ctx, principal, db, segments, base }) => {
      const call = { ctx, principal, db, base };
      return await handleAccessKeys(keysDeps, call, segments) || await handleAccessRules(rulesDeps, call, segments);
    }, ['accessKeys', 'accessRules']);
    // Decisions §7.3: a user links its access keys, a tenant its access rules, for the callers those lists answer
    // (keys-rest.ts, rules-rest.ts): administrators of the object's tenant and system administrators.
    const administers = (principal: Principal, tenant: string) => principal.systemAdmin || (principal.accessLevel === 'ADMINISTRATOR' && principal.tenant === tenant);
    host.addObjectLink({ type: 'User', name: 'accessKeys', visible: (principal, user) => administers(principal, user.tenant) });
    host.addObjectLink({ type: 'Tenant', name: 'accessRules', visible: (principal, tenant) => administers(principal, tenant.id) });
  },
};
