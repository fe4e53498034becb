/** Running the service: health, context path, OpenAPI, logs, shutdown, and a database that goes away. */
import net from 'node:net';
import { expect } from 'chai';
import { validate } from '@readme/openapi-parser';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { HEAP_FLAGS, missingHeapFlags } from '../../runtime/heap.ts';
import { ADMIN, basic, createDatabase, logLines, startService, storageEnv, type TestService } from '../helpers/service.ts';
import { freePort, startMain, startNpmStart } from '../helpers/main-process.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

describe('operability', () => {
  let t: TestService | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('answers /health with 200 while the database is reachable', async () => {
    t = await startService();
    const r = await t.request('/health', { auth: null });
    expect(r.status).to.equal(200);
    expect(await r.json()).to.deep.equal({ status: 'ok' });
    // No metrics listener unless SERVICE_METRICS_PORT asks for one.
    expect(t.service.metricsPort()).to.equal(undefined);
  });

  it('serves the generated OpenAPI document as valid OpenAPI 3.1, in YAML and JSON', async () => {
    t = await startService();
    const json = await (await t.request('/specification/openapi.json')).json();
    const yamlResponse = await t.request('/specification/openapi.yaml');
    expect(yamlResponse.headers.get('content-type')).to.match(/yaml/);
    expect(parse(await yamlResponse.text())).to.deep.equal(json);
    expect(json.openapi).to.match(/^3\.1\./);
    const result = await validate(structuredClone(json));
    expect(result.valid, JSON.stringify(result)).to.equal(true);
  });

  it('moves every address below SERVICE_CONTEXT_PATH, links included', async () => {
    t = await startService({ SERVICE_CONTEXT_PATH: '/mms' });
    expect(t.url).to.match(/\/mms$/);
    const db = await createDatabase(t);
    const created = await (await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'S' } })).json();
    expect(created._links.self.href).to.equal(`${t.url}/rest/${db}/schemes/${created.id}`);
    expect((await t.request('/health', { auth: null })).status).to.equal(200);
    expect((await t.request('/specification/openapi.yaml')).status).to.equal(200);
    const outside = await fetch(t.url.replace(/\/mms$/, `/rest/${db}/schemes`), { headers: { authorization: basic(ADMIN.loginId, ADMIN.password), 'accept-language': 'de' } });
    expect(outside.status).to.equal(404);
    expect(await outside.json()).to.include({ statusCode: 404, message: 'Unter dieser Adresse wurde nichts gefunden.' });
  });

  it('judges the path of a REST call only after authentication', async () => {
    t = await startService();
    const db = await createDatabase(t);
    for (const path of [`/rest/${db}/schemes//x`, `/rest/${db}/schemes/%E0%A4%A`, `/rest/${db}/schemes/..`, `/rest/nosuchdb/schemes`]) {
      const r = await t.request(path, { auth: null });
      expect(r.status, path).to.equal(401);
      expect(r.headers.get('www-authenticate'), path).to.match(/^Basic /);
    }
    expect((await t.request(`/rest/${db}/schemes//x`)).status).to.equal(400);
    expect((await t.request(`/rest/nosuchdb/schemes`)).status).to.equal(404);
  });

  it('answers 404, not 500, when another instance dropped the database a moment ago', async () => {
    t = await startService();
    const db = await createDatabase(t);
    const scheme = await (await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'S' } })).json();
    expect((await t.request(`/rest/${db}/schemes/${scheme.id}`)).status).to.equal(200);
    // What another instance's DELETE leaves for this one while its cache still knows the database.
    await t.service.storage.knex.raw(`drop schema "db_${db}" cascade`);
    for (const path of [`/rest/${db}/schemes/${scheme.id}`, `/rest/${db}/schemes/S/classifiers/C`, `/rest/${db}/schemes`]) {
      const r = await t.request(path);
      expect(r.status, path).to.equal(404);
    }
    // The other half of that DELETE: a database row without its schema would outlive the test on a shared PostgreSQL.
    await t.service.storage.knex.raw(`delete from service.databases where name = ?`, [db]);
  });

  it('logs each request as JSON with method, path, status, duration and login ID, and never the password', async () => {
    t = await startService();
    const before = logLines.length;
    await t.request('/api/admin/databases');
    const lines = logLines.slice(before).map((l) => JSON.parse(l));
    const request = lines.find((l) => l.msg === 'request' && l.path === '/api/admin/databases');
    expect(request).to.include({ method: 'GET', status: 200, loginId: ADMIN.loginId });
    expect(request.durationMs).to.be.a('number');
    expect(logLines.join('\n')).to.not.contain(ADMIN.password);
  });

  it('finishes a request in flight on SIGTERM to npm start and exits 0', async function () {
    this.timeout(180_000);
    const port = await freePort();
    // The signal goes to npm, as a process manager that started `npm start` sends it.
    const { child, exited, output } = await startNpmStart(port);
    // Started as npm start starts it: no warning about V8 flags.
    expect(output()).to.not.contain('started without these flags');
    // A request whose body arrives only after the signal.
    const body = JSON.stringify({ name: `sigterm_${port}` });
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let response = '';
    socket.on('data', (d) => (response += d));
    socket.write(`POST /api/admin/databases HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic('admin', 'admin-secret-1')}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`);
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    socket.write(body.slice(5));
    await new Promise((r) => socket.once('close', r));
    expect(response).to.match(/^HTTP\/1\.1 201/);
    expect((await exited).code).to.equal(0);
  });

  it('npm start gives node the heap flags; one given with another value or spelling counts as given', () => {
    const start = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).scripts.start.split(/\s+/);
    expect(HEAP_FLAGS).to.deep.equal(['--heap-growing-percent=100']);
    expect(missingHeapFlags(start)).to.deep.equal([]);
    expect(missingHeapFlags(['--import', 'tsx', '--heap-growing-percent-x=1'])).to.deep.equal([...HEAP_FLAGS]);
    expect(missingHeapFlags(['--heap-growing-percent=150'])).to.deep.equal([]);
    expect(missingHeapFlags(['--heap_growing_percent=100'])).to.deep.equal([]);
  });

  it('logs which heap flags node lacks when started without them, and still serves', async function () {
    this.timeout(180_000);
    const port = await freePort();
    const { child, exited, output } = await startMain([], port);
    const warning = output().split('\n').filter((l) => l.includes('started without these flags')).map((l) => JSON.parse(l));
    expect(warning).to.have.length(1);
    expect(warning[0]).to.include({ level: 40 });
    expect(warning[0].missing).to.deep.equal([...HEAP_FLAGS]);
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).to.equal(200);
    child.kill('SIGTERM');
    expect((await exited).code).to.equal(0);
  });

  describe('a PostgreSQL that goes away and comes back', () => {
    let proxy: net.Server;
    let sockets: net.Socket[] = [];
    let port: number;
    const target = () => new URL(storageEnv().SERVICE_DATABASE_URL!);

    function listen(onPort = 0) {
      proxy = net.createServer((client) => {
        const upstream = net.connect(Number(target().port || 5432), target().hostname);
        sockets.push(client, upstream);
        client.pipe(upstream).pipe(client);
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
      });
      return new Promise<number>((resolve) => proxy.listen(onPort, '127.0.0.1', () => resolve((proxy.address() as net.AddressInfo).port)));
    }
    function goAway() {
      proxy.close();
      for (const s of sockets) s.destroy();
      sockets = [];
    }

    before(function () {
      if (!storageEnv().SERVICE_DATABASE_URL) this.skip();
    });

    it('answers 503 meanwhile and recovers by itself', async function () {
      this.timeout(60_000);
      port = await listen();
      const url = target();
      url.port = String(port);
      t = await startService({ SERVICE_DATABASE_URL: url.toString() });
      const db = await createDatabase(t);
      const scheme = await (await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'S' } })).json();
      // Lists, the prepared lookup by technical key and business-key chains each meet the outage.
      const paths = [`/rest/${db}/schemes`, `/rest/${db}/schemes/${scheme.id}`, `/rest/${db}/schemes/S/classifiers/C`];
      expect((await t.request(paths[1])).status).to.equal(200);
      goAway();
      for (const path of paths) {
        const during = await t.request(path);
        expect(during.status, path).to.equal(503);
        expect((await during.json()).statusCode).to.equal(503);
      }
      expect((await t.request('/health', { auth: null })).status).to.equal(503);
      await listen(port);
      let status = 0;
      for (let i = 0; i < 20 && status !== 200; i++) {
        status = (await t.request(`/rest/${db}/schemes`)).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      expect(status).to.equal(200);
      expect((await t.request(paths[1])).status).to.equal(200);
      goAway();
    });
  });
});
