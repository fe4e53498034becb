/**
 * The Prometheus figures (runtime/metrics.ts), scraped from the listener of
 * a real service after real requests: REST reads and writes, refused
 * sign-ins, a query and a job.
 */
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../runtime/config.ts';
import { UUID } from '../../runtime/rest/paths.ts';
import { ADMIN, createDatabase, startService, storageEnv, type TestService } from '../helpers/service.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus's text format, the samples only. */
function parse(text: string): Sample[] {
  return text.split('\n').filter((line) => line && !line.startsWith('#')).map((line) => {
    const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample: ${line}`);
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    return { name: match[1], labels, value: Number(match[3]) };
  });
}

/** The value of the sample with exactly these labels (0 when there is none yet). */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const same = (s: Sample) => s.name === name && Object.keys(s.labels).length === Object.keys(labels).length
    && Object.entries(labels).every(([k, v]) => s.labels[k] === v);
  return samples.find(same)?.value ?? 0;
}

describe('metrics (SERVICE_METRICS_PORT)', () => {
  let t: TestService;
  let db: string;
  const scrape = async () => {
    const r = await fetch(`http://127.0.0.1:${t.service.metricsPort()}/metrics`);
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    return parse(await r.text());
  };

  before(async () => {
    t = await startService({ SERVICE_METRICS_PORT: '0' });
    db = await createDatabase(t);
    await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Sales Model' } });
    await t.request(`/rest/${db}/schemes/Sales%20Model/classifiers`, { method: 'POST', json: { _type: 'Classifier', label: 'Customer' } });
  });
  after(() => t.close());

  it('serves GET /metrics on a listener of its own, and nothing else there', async () => {
    const base = `http://127.0.0.1:${t.service.metricsPort()}`;
    expect(t.service.metricsPort()).to.be.a('number').and.not.equal(new URL(t.url).port);
    expect((await fetch(`${base}/`)).status).to.equal(404);
    expect((await fetch(`${base}/rest/${db}/schemes`)).status).to.equal(404);
    expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).to.equal(405);
    // The service's own address does not serve them.
    expect((await t.request('/metrics')).status).to.equal(404);
    const samples = await scrape();
    expect(samples.some((s) => s.name === 'process_cpu_user_seconds_total')).to.equal(true);
    expect(samples.some((s) => s.name === 'service_interactive_pauses_total')).to.equal(true);
    expect(samples.some((s) => s.name === 'service_interactive_rate_wait_seconds_total')).to.equal(true);
  });

  it('counts requests by method, route template and status, with their latency, and no label names a database, key or label', async () => {
    const before = await scrape();
    const list = `/rest/${db}/schemes/Sales%20Model/classifiers`;
    for (let i = 0; i < 3; i++) expect((await t.request(list)).status).to.equal(200);
    expect((await t.request(`${list}/Customer`, { method: 'PATCH', json: { description: 'Buys' } })).status).to.equal(200);
    const missing = '0b7c3f5e-9a1d-4c1e-8f00-5a6b7c8d9e0f';
    expect((await t.request(`/rest/${db}/schemes/${missing}`)).status).to.equal(404);
    expect((await t.request(`/rest/${db}/nonsense/${missing}`)).status).to.equal(404);
    const after = await scrape();
    const grew = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);
    const requests = (method: string, route: string, status: string) => grew('service_http_requests_total', { method, route, status });
    expect(requests('GET', '/rest/{db}/schemes/{key}/classifiers', '200')).to.equal(3);
    expect(grew('service_http_request_duration_seconds_count', { method: 'GET', route: '/rest/{db}/schemes/{key}/classifiers' })).to.equal(3);
    expect(requests('PATCH', '/rest/{db}/schemes/{key}/classifiers/{key}', '200')).to.equal(1);
    expect(requests('GET', '/rest/{db}/schemes/{key}', '404')).to.equal(1);
    expect(requests('GET', 'unmatched', '404')).to.equal(1);
    expect(valueOf(after, 'service_http_requests_total', { method: 'POST', route: '/api/admin/databases', status: '201' })).to.equal(1);
    const values = after.flatMap((s) => Object.values(s.labels));
    for (const value of values) {
      expect(UUID.test(value) || value.includes(db) || /Sales|Customer|nonsense/.test(value), value).to.equal(false);
    }
  });

  it('counts refused sign-ins by method and status, without the login ID', async () => {
    const before = await scrape();
    expect((await t.request(`/rest/${db}/schemes`, { auth: null })).status).to.equal(401);
    expect((await t.request(`/rest/${db}/schemes`, { auth: { loginId: ADMIN.loginId, password: 'not-the-password' } })).status).to.equal(401);
    expect((await t.request(`/rest/${db}/made-up-list`, { auth: null })).status).to.equal(401);
    const after = await scrape();
    const grew = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(grew('service_sign_in_failures_total', { method: 'none', status: '401' })).to.equal(2);
    expect(grew('service_sign_in_failures_total', { method: 'basic', status: '401' })).to.equal(1);
    expect(grew('service_http_requests_total', { method: 'GET', route: '/rest/{db}/schemes', status: '401' })).to.equal(2);
    // A path made up by someone turned away is no route.
    expect(grew('service_http_requests_total', { method: 'GET', route: 'unmatched', status: '401' })).to.equal(1);
    expect(after.flatMap((s) => Object.values(s.labels))).to.not.include(ADMIN.loginId);
  });

  it('counts the bytes of exports and job downloads by format, and the jobs by state', async () => {
    const before = await scrape();
    const exported = await t.request(`/api/${db}/queries/download?format=CSV`, { method: 'PUT', json: { sql: 'select label from classifier_view' } });
    const csv = Buffer.from(await exported.arrayBuffer());
    expect(exported.status).to.equal(200);
    const started = await t.request(`/api/${db}/queries/download?format=JSON`, { method: 'POST', json: { sql: 'select label from scheme_view' } });
    const { id } = await started.json();
    let polls = 0;
    for (let status = 202; status === 202; polls++) {
      status = (await t.request(`/api/${db}/jobs/${id}/statistics`)).status;
      if (status === 202) await new Promise((r) => setTimeout(r, 50));
    }
    const json = Buffer.from(await (await t.request(`/api/${db}/jobs/${id}/download`)).arrayBuffer());
    expect(JSON.parse(json.toString())).to.deep.equal([{ label: 'Sales Model' }]);
    const after = await scrape();
    const grew = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(grew('service_query_export_bytes_total', { format: 'CSV', kind: 'export' })).to.equal(csv.length);
    expect(grew('service_query_export_bytes_total', { format: 'JSON', kind: 'job' })).to.equal(json.length);
    expect(grew('service_query_jobs_finished_total', { status: 'COMPLETED' })).to.equal(1);
    expect(valueOf(after, 'service_query_jobs', { state: 'QUEUED' })).to.equal(0);
    expect(valueOf(after, 'service_query_jobs', { state: 'RUNNING' })).to.equal(0);
    expect(grew('service_http_requests_total', { method: 'GET', route: '/api/{db}/jobs/{id}/statistics', status: '200' })
      + grew('service_http_requests_total', { method: 'GET', route: '/api/{db}/jobs/{id}/statistics', status: '202' })).to.equal(polls);
    expect(grew('service_http_requests_total', { method: 'PUT', route: '/api/{db}/queries/download', status: '200' })).to.equal(1);
  });

  it('reports the database pools: the service\'s, and the query interface\'s (embedded: its copies of the database)', async () => {
    const samples = await scrape();
    const connections = (pool: string) => valueOf(samples, 'service_database_pool_connections', { pool, state: 'used' })
      + valueOf(samples, 'service_database_pool_connections', { pool, state: 'free' });
    expect(valueOf(samples, 'service_database_pool_pending_acquires', { pool: 'service' })).to.equal(0);
    const postgres = !!storageEnv().SERVICE_DATABASE_URL;
    // The embedded database has one connection; PostgreSQL's pools keep what they opened for a while.
    if (postgres) expect(connections('service')).to.be.at.least(1);
    else expect(connections('service')).to.equal(1);
    // A query ran before: its connection, or its copy of the embedded database, is kept for a while.
    expect(connections('query')).to.be.at.least(1);
    if (!postgres) expect(connections('query')).to.be.at.most(2);
    expect(valueOf(samples, 'service_database_pool_pending_acquires', { pool: 'query' })).to.equal(0);
  });

  it('is off without SERVICE_METRICS_PORT; a malformed one stops the start with a message naming it', () => {
    expect(loadConfig({}).metricsPort).to.equal(undefined);
    expect(loadConfig({ SERVICE_METRICS_PORT: '9464', HOST: '0.0.0.0' })).to.include({ metricsPort: 9464, metricsHost: '0.0.0.0' });
    expect(loadConfig({ SERVICE_METRICS_PORT: '9464', HOST: '0.0.0.0', SERVICE_METRICS_HOST: '127.0.0.1' }).metricsHost).to.equal('127.0.0.1');
    for (const env of [{ SERVICE_METRICS_PORT: 'x' }, { SERVICE_METRICS_PORT: '70000' }, { SERVICE_METRICS_PORT: '8080', PORT: '8080' }]) {
      expect(() => loadConfig(env)).to.throw(ConfigError, /^SERVICE_METRICS_PORT: /);
    }
  });
});
