/**
 * The route table (generated/routes.gen.ts) is what the runtime dispatches
 * REST requests from, and it names the operations the OpenAPI document names.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { restRoutes as emittedRoutes } from '../../generator/rest-routes.ts';
import { routesEmitter } from '../../generator/emitters/routes.ts';
import { DEFAULT_GENERATED_DIR } from '../../runtime/config.ts';
import { MetamodelError, resolveMetamodel } from '../../runtime/metamodel/resolve.ts';
import { readStandardMetamodel } from '../../runtime/metamodel/standard.ts';
import { RouteTable, type RestRoute } from '../../runtime/rest/route-table.ts';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const model = resolveMetamodel(readStandardMetamodel());
const routes = emittedRoutes(model);
const document = JSON.parse(readFileSync(join(DEFAULT_GENERATED_DIR, 'openapi.gen.json'), 'utf8'));

describe('the REST route table', () => {
  it('is emitted as routes.gen.ts, and the metamodel as metamodel.gen.ts', () => {
    const files = routesEmitter.emit(model);
    expect(files.map((f) => f.path).sort()).to.deep.equal(['metamodel.gen.ts', 'routes.gen.ts']);
    const table = files.find((f) => f.path === 'routes.gen.ts')!.content;
    expect(table).to.contain('export const restRoutes: readonly RestRoute[]');
    expect(table).to.contain('{"method":"DELETE","path":"/rest/{db}/schemes/{key}","operation":"deleteScheme","type":"Scheme","handler":"deleteObject"}');
  });

  it('holds every REST operation of the OpenAPI document, under the same operationId', () => {
    const byKey = new Map(routes.map((r) => [`${r.method} ${r.path}`, r]));
    let documented = 0;
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, { operationId?: string }>>)) {
      if (!path.startsWith('/rest/{db}/')) continue;
      for (const [method, operation] of Object.entries(item)) {
        if (!operation?.operationId) continue;
        // Plugins' calls below /rest (access keys, access rules) are theirs, not the metamodel's.
        const route = byKey.get(`${method.toUpperCase()} ${path}`);
        if (!route && !model.plurals[path.split('/')[3]]) continue;
        if (!route && /\/(accessKeys|accessRules)(\/|$)/.test(path)) continue;
        expect(route, `${method.toUpperCase()} ${path}`).to.not.equal(undefined);
        expect(route!.operation, `${method.toUpperCase()} ${path}`).to.equal(operation.operationId);
        documented++;
      }
    }
    expect(documented).to.be.greaterThan(100);
  });

  it('is documented whole: every route is an operation of the OpenAPI document, under its operationId', () => {
    const undocumented = routes.filter((r) => document.paths[r.path]?.[r.method.toLowerCase()]?.operationId !== r.operation)
      .map((r) => `${r.method} ${r.path} ${r.operation}`);
    expect(undocumented).to.deep.equal([]);
  });

  it('has one route per method and path, each naming a handler for its kind of path', () => {
    const keys = routes.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).to.equal(keys.length);
    const operations = routes.map((r) => r.operation);
    expect(new Set(operations).size).to.equal(operations.length);
    for (const r of routes) {
      const isObject = r.path.endsWith('/{key}');
      expect(r.handler.endsWith('Object'), `${r.method} ${r.path}`).to.equal(isObject);
      expect(model.types[r.type], r.type).to.not.equal(undefined);
    }
    // Inverse lists are read only.
    const inverse = Object.values(model.types).filter((t) => t.plural).flatMap((t) => t.lists.filter((l) => l.inverseOf).map((l) => `/rest/{db}/${t.plural}/{key}/${l.name}`));
    expect(inverse).to.not.be.empty;
    for (const path of inverse) expect(routes.filter((r) => r.path === path).map((r) => r.method), path).to.deep.equal(['GET']);
  });

  it('answers 405 with the methods a path has, and serves HEAD where it serves GET', () => {
    const table = new RouteTable(routes);
    expect(table.find('HEAD', '/rest/{db}/schemes/{key}').handler).to.equal('readObject');
    expect(() => table.find('POST', '/rest/{db}/schemes/{key}')).to.throw().with.property('status', 405);
    try {
      table.find('POST', '/rest/{db}/schemes/{key}');
    } catch (err) {
      expect((err as { headers?: Record<string, string> }).headers).to.deep.include({ Allow: 'GET, HEAD, PUT, PATCH, DELETE' });
    }
    expect(() => table.find('GET', '/rest/{db}/nothing')).to.throw().with.property('status', 404);
  });

  it('gives every type plural a read-only history path, which no list can take: the metamodel refuses a list called history', () => {
    const plurals = Object.values(model.types).filter((t) => t.plural).map((t) => t.plural);
    const history = routes.filter((r) => r.path.endsWith('/{key}/history'));
    expect(history.map((r) => r.path).sort()).to.deep.equal(plurals.map((p) => `/rest/{db}/${p}/{key}/history`).sort());
    expect(history.every((r) => r.method === 'GET' && r.handler === 'readHistory')).to.equal(true);
    const raw = readStandardMetamodel();
    const scheme = raw.types.Scheme as { properties?: Record<string, unknown> };
    scheme.properties = { ...scheme.properties, history: { dataType: 'LIST', range: 'Classifier' } };
    expect(() => resolveMetamodel(raw)).to.throw(MetamodelError, /list may not be called history/);
  });

  describe('dispatches the running service', function () {
    this.timeout(120_000);
    let work: string;
    let t: TestService | undefined;
    before(() => {
      // The generated code with one route taken out: deleting a scheme is then not served.
      work = mkdtempSync(join(ROOT, '.tmp', 'routes-'));
      cpSync(DEFAULT_GENERATED_DIR, work, { recursive: true });
      const without = routes.filter((r) => !(r.method === 'DELETE' && r.path === '/rest/{db}/schemes/{key}'));
      const file = readFileSync(join(work, 'routes.gen.ts'), 'utf8');
      const head = file.slice(0, file.indexOf('export const restRoutes'));
      writeFileSync(join(work, 'routes.gen.ts'), `${head}export const restRoutes: readonly RestRoute[] = ${JSON.stringify(without satisfies RestRoute[])};\n`);
    });
    after(async () => {
      await t?.close();
      rmSync(work, { recursive: true, force: true });
    });

    it('from the route table it loaded', async () => {
      t = await startService({ SERVICE_GENERATED_DIR: work });
      const db = await createDatabase(t);
      const created = await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Sales' } });
      expect(created.status, await created.clone().text()).to.equal(201);
      const refused = await t.request(`/rest/${db}/schemes/Sales`, { method: 'DELETE' });
      expect(refused.status).to.equal(405);
      expect(refused.headers.get('allow')).to.equal('GET, HEAD, PUT, PATCH');
      // Other routes of the path are served as before.
      expect((await t.request(`/rest/${db}/schemes/Sales`)).status).to.equal(200);
      expect((await t.request(`/rest/${db}/schemes/Sales`, { method: 'PATCH', json: { title: 'Sales model' } })).status).to.equal(200);
    });
  });
});
