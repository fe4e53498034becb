/**
 * `GET /api/<db>/metamodel` (decisions §9): the metamodel laid over with the
 * profiles that apply to the caller's login tenant (resolved.ts), for the
 * user interface and any integration. Anyone signed in to the tenant may
 * read it. The answer depends only on the code (metamodel and standard
 * profiles), the database, the tenant, the revisions of the tenant's two
 * profiles and the language, and its ETag is made of exactly these: a
 * revalidation costs one small lookup and answers 304 without reading a
 * document, and an upload (a new revision) changes it.
 */
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { Knex } from 'knex';
import type Router from '@koa/router';
import { createError, languageParameter, schemaOf, type Language, type Metamodel, type Principal } from '../../runtime/host.ts';
import { STANDARD_FILES, TENANT_PROFILES } from './catalog.ts';
import { KIND_TYPE } from './rules.ts';
import { resolveMetamodelFor, type Layer, type PropertyLimits } from './resolved.ts';
import { ProfileStore } from './store.ts';

export interface MetamodelRouteOptions {
  knex: Knex;
  model: Metamodel;
  limits: PropertyLimits;
  /** The standard annotations and the standard profile, parsed, by name. */
  standard: Record<string, Layer>;
  /** Stands for the code: changes when the metamodel or the standard profiles do. */
  fingerprint: string;
  defaultLanguage: Language;
}

/** Answers kept per instance, by ETag: a few tenants' interfaces loading at once share one build. */
const KEPT_ANSWERS = 8;

type Revisions = Record<string, { revision: number }>;

/** A scheme's view: the scheme (its key and version stand for its `profiles` and kind). */
interface SchemeView {
  id: string;
  version: number;
  profiles: string[];
  kind?: string;
}

function etagOf(fingerprint: string, db: string, tenant: string, revisions: Revisions, language: Language, scheme?: SchemeView): string {
  const parts = [fingerprint, db, tenant, ...Object.keys(TENANT_PROFILES).map((n) => String(revisions[n]?.revision ?? '-')), language];
  if (scheme) parts.push(scheme.id, String(scheme.version), ...scheme.profiles.map((n) => `${n}\u0001${revisions[n]?.revision ?? '-'}`));
  return `W/"${createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 32)}"`;
}

/** If-None-Match compares weakly: any listed tag, with or without W/, or `*`. */
function matches(header: string, etag: string): boolean {
  if (!header) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || bare(tag) === bare(etag));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The scheme `?scheme=` names, in the caller's tenant: 400 for a malformed key, 404 for none. */
async function schemeOf(knex: Knex, model: Metamodel, db: string, tenant: string, given: unknown): Promise<SchemeView | undefined> {
  if (given === undefined) return undefined;
  if (typeof given !== 'string' || !UUID.test(given)) throw createError('INVALID_PARAMETER', { name: 'scheme' }, [{ path: 'scheme', key: 'invalidParameter', params: { name: 'scheme' } }]);
  const kinds = Object.values(model.types).filter((t) => t.name === KIND_TYPE || t.supertypes.includes(KIND_TYPE)).map((t) => t.name);
  const r = await knex.raw(
    `select id, version, props -> 'profiles' as profiles, props ->> 'modelType' as kind from "${schemaOf(db)}".objects
     where tenant = ? and id = ? and type in (${kinds.map(() => '?').join(', ')})`,
    [tenant, given.toLowerCase(), ...kinds],
  );
  const row = r.rows[0];
  if (!row) throw createError('OBJECT_NOT_FOUND', { type: KIND_TYPE, key: given });
  const profiles = typeof row.profiles === 'string' ? JSON.parse(row.profiles) : row.profiles;
  return {
    id: row.id,
    version: Number(row.version),
    profiles: Array.isArray(profiles) ? profiles.filter((n: unknown): n is string => typeof n === 'string') : [],
    ...(typeof row.kind === 'string' && (model.enumerations.ModelType ?? []).includes(row.kind) ? { kind: row.kind } : {}),
  };
}

export function metamodelRoute(api: Router, o: MetamodelRouteOptions) {
  const kept = new Map<string, string>();
  api.get('/metamodel', async (ctx) => {
    const language = languageParameter(ctx as unknown as Context, o.defaultLanguage);
    const principal = ctx.state.principal as Principal;
    const db = (ctx.state.db as { name: string }).name;
    const tenant = principal.tenant!;
    const store = new ProfileStore(o.knex, db);
    ctx.set('Vary', 'Accept-Language');
    ctx.set('Cache-Control', 'private, no-cache');
    const scheme = await schemeOf(o.knex, o.model, db, tenant, ctx.query.scheme);
    let etag = etagOf(o.fingerprint, db, tenant, await store.current(tenant, false), language, scheme);
    if (matches(ctx.get('If-None-Match'), etag)) {
      ctx.set('ETag', etag);
      ctx.status = 304;
      return;
    }
    let body = kept.get(etag);
    if (body === undefined) {
      // Read again with the documents: an upload in between gives the newer answer, under its own tag.
      const current = await store.current(tenant, true);
      etag = etagOf(o.fingerprint, db, tenant, current, language, scheme);
      const tenantLayer = (name: string): Layer[] => {
        if (Object.hasOwn(STANDARD_FILES, name)) return [o.standard[name]];
        // Named profiles hold annotations; a name deleted since adds nothing.
        const kind = Object.hasOwn(TENANT_PROFILES, name) ? TENANT_PROFILES[name].kind : 'annotations';
        return current[name]?.parsed ? [{ kind, document: current[name].parsed! }] : [];
      };
      // Standard, the tenant's, then (for a scheme's view) the profiles the scheme names, in order.
      const layers: Layer[] = [...Object.keys(STANDARD_FILES), ...Object.keys(TENANT_PROFILES), ...(scheme?.profiles ?? [])].flatMap(tenantLayer);
      body = JSON.stringify(resolveMetamodelFor(o.model, layers, o.limits, language, scheme));
      kept.delete(etag);
      kept.set(etag, body);
      while (kept.size > KEPT_ANSWERS) kept.delete(kept.keys().next().value!);
    }
    ctx.set('ETag', etag);
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.body = body;
  });
}
