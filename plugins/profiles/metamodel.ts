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
import { languageParameter, type Language, type Metamodel, type Principal } from '../../runtime/host.ts';
import { TENANT_PROFILES } from './catalog.ts';
import { resolveMetamodelFor, type Layer, type PropertyLimits } from './resolved.ts';
import { ProfileStore } from './store.ts';

export interface MetamodelRouteOptions {
  knex: Knex;
  model: Metamodel;
  limits: PropertyLimits;
  /** The standard annotations and the standard profile, parsed. */
  standard: Layer[];
  /** Stands for the code: changes when the metamodel or the standard profiles do. */
  fingerprint: string;
  defaultLanguage: Language;
}

/** Answers kept per instance, by ETag: a few tenants' interfaces loading at once share one build. */
const KEPT_ANSWERS = 8;

type Revisions = Record<string, { revision: number }>;

function etagOf(fingerprint: string, db: string, tenant: string, revisions: Revisions, language: Language): string {
  const parts = [fingerprint, db, tenant, ...Object.keys(TENANT_PROFILES).map((n) => String(revisions[n]?.revision ?? '-')), language];
  return `W/"${createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 32)}"`;
}

/** If-None-Match compares weakly: any listed tag, with or without W/, or `*`. */
function matches(header: string, etag: string): boolean {
  if (!header) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || bare(tag) === bare(etag));
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
    let etag = etagOf(o.fingerprint, db, tenant, await store.current(tenant, false), language);
    if (matches(ctx.get('If-None-Match'), etag)) {
      ctx.set('ETag', etag);
      ctx.status = 304;
      return;
    }
    let body = kept.get(etag);
    if (body === undefined) {
      // Read again with the documents: an upload in between gives the newer answer, under its own tag.
      const current = await store.current(tenant, true);
      etag = etagOf(o.fingerprint, db, tenant, current, language);
      const layers: Layer[] = [...o.standard, ...Object.entries(TENANT_PROFILES).flatMap(([name, p]) => (current[name]?.parsed ? [{ kind: p.kind, document: current[name].parsed! }] : []))];
      body = JSON.stringify(resolveMetamodelFor(o.model, layers, o.limits, language));
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
