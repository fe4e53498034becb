/**
 * The calls of upload and download (decisions §8), below /api/<db>/:
 *
 *   GET schemes/<label>/download       a scheme and everything below it
 *   GET collections/<uuid>/download    a collection and everything below it
 *   GET tenants/<label>/download       a tenant and its users (its administrators, system administrators)
 *   PUT schemes/<label>/upload         a file into a scheme (created when missing), as a job
 *   PUT collections/<uuid>/upload      a file into a collection, as a job
 *
 * Downloads stream as the model is read; they give way to requests someone
 * waits for (the interactive gate). Uploads answer 202 with the job, whose
 * statistics, logs and change report are under /api/<db>/jobs/<id>/….
 */
import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import {
  createError, epochMillis, languageParameter, ObjectStore, requireLevel, UUID,
  type DatabaseInfo, type Metamodel, type PluginHost, type Principal, attachment, readSingleFile } from '../../runtime/host.ts';
import { formatNamed, formatNames, formatOfFilename } from './formats/index.ts';
import type { TransferFormat } from './records.ts';
import { Download, Source, type DownloadOptions } from './download.ts';
import type { KeyedNode } from './model.ts';
import { runUpload, type Operation, type UploadSpec } from './upload.ts';

/** How this interface words and answers a refused upload (runtime/multipart.ts). */
const UPLOAD_RULES = { messages: 'transfer', restStatuses: true };

function invalidParameter(name: string, key = 'invalidValue', params: Record<string, unknown> = {}) {
  return createError('INVALID_PARAMETER', { name }, [{ path: name, key, params }]);
}

function single(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw invalidParameter(name);
  return value;
}

function formatParameter(ctx: Context): TransferFormat | undefined {
  const name = single(ctx, 'format');
  if (name === undefined) return undefined;
  const format = formatNamed(name);
  if (!format) throw invalidParameter('format', 'transferUnknownFormat', { allowed: formatNames().join(', ') });
  return format;
}

function flag(ctx: Context, name: string): boolean {
  const text = single(ctx, name);
  if (text === undefined) return false;
  if (!/^(true|false)$/i.test(text)) throw invalidParameter(name);
  return text.toLowerCase() === 'true';
}

/** A file name made of a label: what it is, without folders. */
function fileName(label: string, format: TransferFormat): string {
  const base = label.replace(/[\\/]/g, '_').replace(/[\u0000-\u001f\u007f]/g, '').trim() || 'download';
  return `${base}.${format.extension}`;
}

export function registerRoutes(host: PluginHost, model: Metamodel) {
  const typeOf = (name: string) => (Object.hasOwn(model.types, name) ? model.types[name] : undefined);

  function wantedTypes(ctx: Context): Set<string> | undefined {
    const text = single(ctx, 'assetTypes');
    if (text === undefined) return undefined;
    const names = text.split(',').map((n) => n.trim()).filter(Boolean);
    const unknown = names.find((n) => !typeOf(n));
    if (!names.length || unknown) throw invalidParameter('assetTypes', 'unknownType', { type: unknown ?? '' });
    return new Set(names.flatMap((n) => model.types[n].concreteTypes));
  }

  function version(ctx: Context): number | undefined {
    const text = single(ctx, 'version');
    if (text === undefined) return undefined;
    const ms = epochMillis(text);
    if (ms === undefined) throw invalidParameter('version');
    return ms;
  }

  /** Streams the download of `root` (found by `find` in the source) in the requested format. */
  async function download(ctx: Context, find: (source: Source, principal: Principal) => Promise<KeyedNode | null>, notFound: () => Error,
    extra?: (source: Source, root: KeyedNode) => DownloadOptions['extraLists']) {
    const principal = ctx.state.principal as Principal;
    const db = ctx.state.db as DatabaseInfo;
    const format = formatParameter(ctx) ?? formatNamed('JSON')!;
    const wanted = wantedTypes(ctx);
    const at = version(ctx);
    const language = languageParameter(ctx, host.config.language);
    const tenantSource = new Source(host.knex, db.name, principal.tenant!, model, at);
    const root = await find(tenantSource, principal);
    if (!root) throw notFound();
    const source = root.type === 'Tenant' ? new Source(host.knex, db.name, root.id, model, at) : tenantSource;
    host.bulk(ctx);
    const out = new PassThrough();
    const stop = new AbortController();
    ctx.res.once('close', () => stop.abort());
    const run = new Download({ model, source, root, wanted, extraLists: extra?.(source, root), gate: host.interactive, signal: stop.signal });
    ctx.status = 200;
    ctx.set('Content-Type', format.contentType);
    ctx.set('Content-Disposition', attachment(fileName(root.label, format)));
    ctx.body = out;
    const writer = format.writer(out, { typeOf, language });
    run.run(writer).catch(async (err) => {
      if (!stop.signal.aborted) host.log.error({ err: String(err), db: db.name }, 'download failed');
      // A format that keeps temporary files (CSV, XLSX) removes them.
      await writer.abort?.().catch(() => undefined);
      out.destroy(err as Error);
    });
  }

  /** A scheme by technical key or label, as REST paths name objects. */
  const schemeOf = async (source: Source, key: string) => {
    if (!UUID.test(key)) return source.child(null, 'schemes', key);
    const node = await source.byId(key.toLowerCase());
    return node && node.type === 'Scheme' && node.parentId === null ? node : null;
  };

  host.api.get('/schemes/:label/download', (ctx) => download(ctx,
    (source) => schemeOf(source, String(ctx.params.label)),
    () => createError('OBJECT_NOT_FOUND', { type: 'Scheme', key: String(ctx.params.label) })));

  const collectionOf = async (source: Source, id: string) => {
    if (!UUID.test(id)) return null;
    const node = await source.byId(id.toLowerCase());
    return node && model.types.Collection.concreteTypes.includes(node.type) ? node : null;
  };

  host.api.get('/collections/:id/download', (ctx) => download(ctx,
    (source) => collectionOf(source, String(ctx.params.id)),
    () => createError('OBJECT_NOT_FOUND', { type: 'Collection', key: String(ctx.params.id) })));

  host.api.get('/tenants/:label/download', (ctx) => {
    const principal = ctx.state.principal as Principal;
    const label = String(ctx.params.label);
    // A tenant's users are its administrators' to move (and system administrators').
    const own = principal.tenantLabel === label || principal.tenant === label.toLowerCase();
    if (!principal.systemAdmin && !(principal.accessLevel === 'ADMINISTRATOR' && own)) throw createError('FORBIDDEN');
    return download(ctx, async () => {
      const store = new ObjectStore(host.knex, (ctx.state.db as DatabaseInfo).name);
      const tenant = UUID.test(label) ? (await store.byIds(label.toLowerCase(), [label.toLowerCase()])).find((o) => o.type === 'Tenant') : await store.child(null, null, 'tenants', label);
      return tenant ? { id: tenant.id, type: tenant.type, parentId: null, list: 'tenants', label: tenant.label, title: tenant.title,
        description: tenant.description, status: tenant.status, modelId: tenant.modelId, props: tenant.props, custom: tenant.custom } : null;
    }, () => createError('OBJECT_NOT_FOUND', { type: 'Tenant', key: label }),
    (source) => () => [{ name: 'users', pages: () => source.children(null, 'users') }]);
  });

  async function upload(ctx: Context, target: UploadSpec['target']) {
    const principal = ctx.state.principal as Principal;
    const db = ctx.state.db as DatabaseInfo;
    requireLevel(principal, 'EDITOR');
    const operationText = single(ctx, 'operation') ?? 'MERGE';
    if (!['ADD', 'MERGE', 'REPLACE'].includes(operationText)) throw invalidParameter('operation', 'notAllowedValue', { allowed: 'ADD, MERGE, REPLACE' });
    const operation = operationText as Operation;
    // Replacing a whole scheme may delete all of it: administrators only.
    if (operation === 'REPLACE' && target.kind === 'scheme') requireLevel(principal, 'ADMINISTRATOR');
    const dryRun = flag(ctx, 'dryRun');
    const named = formatParameter(ctx);
    const language = languageParameter(ctx, host.config.language);
    if (target.kind === 'scheme' && UUID.test(target.label)) {
      // Named by technical key: it must exist (a label is created when missing).
      const found = await schemeOf(new Source(host.knex, db.name, principal.tenant!, model), target.label);
      if (!found) throw createError('OBJECT_NOT_FOUND', { type: 'Scheme', key: target.label });
      target = { kind: 'scheme', label: found.label };
    }
    if (target.kind === 'collection') {
      const found = await collectionOf(new Source(host.knex, db.name, principal.tenant!, model), target.id);
      if (!found) throw createError('OBJECT_NOT_FOUND', { type: 'Collection', key: target.id });
      target = { kind: 'collection', id: found.id };
    }
    const file = await readSingleFile(ctx, host.config.bodyLimitBytes, 'EDITOR', UPLOAD_RULES);
    const format = named ?? formatOfFilename(file.filename);
    if (!format) {
      throw createError('UNSUPPORTED_MEDIA_TYPE', { contentType: file.filename ?? '-', expected: formatNames().join(', ') },
        [{ path: 'format', key: 'transferFormatUnknownFromName', params: { allowed: formatNames().join(', ') } }]);
    }
    const spec: UploadSpec = { db: db.name, principal, language, model, format, bytes: file.bytes, operation, dryRun, target };
    const id = await host.jobs().submit({
      db: db.name, kind: 'upload', format: 'JSON', language,
      summary: `${operation}${dryRun ? ' (dry run)' : ''} ${file.filename ?? format.name}`,
      owner: { tenant: principal.tenant!, loginId: principal.loginId },
      run: (reporter) => runUpload(host, spec, reporter),
    });
    const url = new URL(ctx.href);
    const location = `${url.origin}${url.pathname.replace(/\/(schemes|collections)\/[^/]+\/upload$/, '')}/jobs/${id}/statistics`;
    ctx.status = 202;
    ctx.set('Location', location);
    ctx.body = { id, _links: { statistics: { href: location }, logs: { href: location.replace(/statistics$/, 'logs') }, download: { href: location.replace(/statistics$/, 'download') } } };
  }

  host.api.put('/schemes/:label/upload', (ctx) => upload(ctx, { kind: 'scheme', label: String(ctx.params.label) }));
  host.api.put('/collections/:id/upload', (ctx) => upload(ctx, { kind: 'collection', id: String(ctx.params.id) }));
}
