/**
 * The profile interface (specification, "Profile interface"; decisions §6):
 * uploads and downloads of each tenant's `annotations` and `profile`, the
 * standard profiles shipped with the code, and the check of custom
 * properties on every REST write against the tenant's annotations.
 * The format is described in README.md beside this file.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import type { Metamodel, PluginHost, PluginManifest } from '../../runtime/host.ts';
import { AnnotationCache } from './cache.ts';
import { loadStandardProfiles, STANDARD_FILES, type StandardProfile } from './catalog.ts';
import { CustomPropertiesChecker } from './check.ts';
import { ProfileReader } from './reader.ts';
import { metamodelRoute } from './metamodel.ts';
import type { Layer, PropertyLimits } from './resolved.ts';
import { profileRoutes } from './routes.ts';
import { MIGRATIONS } from './store.ts';
import { PROFILE_MESSAGES } from './messages.ts';
import { openapi } from './openapi.ts';
import { StatusCache, StatusChecker } from './statuses.ts';

/** 1 MiB: annotation files of several thousand lines fit many times over. */
export const DEFAULT_PROFILE_LIMIT = 1024 * 1024;

/** The resolved metamodel the generator emitted (generated/metamodel.gen.ts), as the REST interface has it. */
async function metamodelOf(generatedDir: string): Promise<Metamodel> {
  const generated = await import(pathToFileURL(join(generatedDir, 'metamodel.gen.ts')).href);
  return generated.metamodel as Metamodel;
}

/** The limits of every property as written (generated/limits.gen.ts, from generator/property-kinds.ts). */
async function limitsOf(generatedDir: string): Promise<PropertyLimits> {
  const generated = await import(pathToFileURL(join(generatedDir, 'limits.gen.ts')).href);
  return generated.propertyLimits as PropertyLimits;
}

/** The standard profiles as layers of the resolved metamodel, by name (the bottom ones: annotations first, the profile over them). */
function standardLayers(standard: Record<string, StandardProfile>): Record<string, Layer> {
  return Object.fromEntries(Object.keys(STANDARD_FILES).map((name) => [name, { kind: standard[name].kind, document: parse(standard[name].bytes.toString('utf8')) ?? {} }]));
}

interface ProfileSettings {
  SERVICE_PROFILE_LIMIT: number;
}

export const manifest: PluginManifest<ProfileSettings> = {
  name: 'profiles',
  openapi,
  host: '^1.8',
  settingsPrefixes: ['SERVICE_PROFILE_'],
  configSchema: {
    type: 'object',
    properties: {
      SERVICE_PROFILE_LIMIT: { type: 'integer', minimum: 1, maximum: 9_999_999_999, default: DEFAULT_PROFILE_LIMIT, description: 'a whole number of bytes from 1 to 9999999999' },
    },
  },
  migrations: { database: MIGRATIONS },
  messages: PROFILE_MESSAGES,
  async register(host: PluginHost, settings) {
    const limit = settings.SERVICE_PROFILE_LIMIT;
    const model = await metamodelOf(host.config.generatedDir);
    const standard = loadStandardProfiles(host.config.generatedDir);
    const statuses = new StatusCache(model);
    const cache = new AnnotationCache(host.knex, model, statuses);
    const checker = new CustomPropertiesChecker(cache, host.log);
    host.addWriteObserver(checker.observe);
    // After the custom-properties check's: its lookup brings the statuses up to date.
    const statusChecker = new StatusChecker(statuses, host.log);
    host.addWriteObserver(statusChecker.observe);
    host.onChange((db, types) => {
      if (types.includes('Tenant')) {
        cache.forget(db);
        statuses.forget(db);
      }
    });
    host.setCustomPropertiesCheck(checker.check);
    host.setStatusCheck(statusChecker.check);
    const reader = new ProfileReader(host.config.generatedDir);
    host.onClose(() => reader.close());
    profileRoutes(host.api, { knex: host.knex, reader, standard, cache, statuses, limit, log: host.log, jsonBody: host.jsonBody });
    const limits = await limitsOf(host.config.generatedDir);
    const fingerprint = createHash('sha256').update(JSON.stringify([model, limits, Object.values(standard).map((s) => s.bytes.toString('base64'))])).digest('base64url');
    metamodelRoute(host.api, { knex: host.knex, model, limits, standard: standardLayers(standard), fingerprint, defaultLanguage: host.config.language });
  },
};
