/**
 * Access keys and access rules: the access-key driver (always on, every
 * method), the REST paths that manage keys and rules, and the tables that
 * keep them in every database. What the rules decide at sign-in is the
 * core's (runtime/auth/access-rules.ts), shared with the explain call here.
 */
import type { PluginHost, PluginManifest } from '../../runtime/plugins.ts';
import { registerMessages } from '../../runtime/messages.ts';
import { accessRulesEnabled, AccessRuleStore } from '../../runtime/auth/access-rules.ts';
import { AccessKeyDriver, DEFAULT_CACHE_TTL_MS } from './driver.ts';
import { ACCESS_MIGRATIONS, AccessKeyStore } from './keys.ts';
import { handleAccessKeys } from './keys-rest.ts';
import { handleAccessRules } from './rules-rest.ts';

registerMessages('en', {
  expiresInPast: 'The time must lie in the future.',
  organizationOnlyForCreate: 'Only a CREATE rule names an organization.',
  organizationNotFound: 'No top-level organization of this tenant has this label.',
});
registerMessages('de', {
  expiresInPast: 'Der Zeitpunkt muss in der Zukunft liegen.',
  organizationOnlyForCreate: 'Nur eine CREATE-Regel nennt eine Organisation.',
  organizationNotFound: 'Keine Organisation der obersten Ebene dieses Mandanten hat diesen Namen.',
});

const BOOLEAN = { type: 'string', pattern: '^\\s*([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])\\s*$', description: 'true or false' };

export const manifest: PluginManifest = {
  name: 'access',
  configSchema: {
    type: 'object',
    properties: {
      SERVICE_ACCESS_RULES: BOOLEAN,
      SERVICE_GUEST_USERS: BOOLEAN,
      SERVICE_ACCESS_KEY_CACHE_TTL: { type: 'string', pattern: '^[0-9]{1,7}$', description: 'a whole number of milliseconds, at most 9999999' },
    },
  },
  register(host: PluginHost) {
    const keys = new AccessKeyStore(host.knex);
    const rules = new AccessRuleStore(host.knex);
    host.addDatabaseMigrations('access', ACCESS_MIGRATIONS);
    const ttl = host.config.env.SERVICE_ACCESS_KEY_CACHE_TTL;
    const driver = new AccessKeyDriver({
      keys, isSystemAdmin: (loginId) => host.directory.isSystemAdmin(loginId), log: host.log,
      cacheTtlMs: ttl ? Number(ttl) : DEFAULT_CACHE_TTL_MS,
    });
    host.addAuthDriver(driver, 20);
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
  },
};
