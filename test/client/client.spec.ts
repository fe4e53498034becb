/**
 * The typed client against the real service on a real port (the suite's
 * backend: PostgreSQL with TEST_DATABASE_URL, else the embedded database):
 * writes, reads, lists, refusals in the specification's error format, the
 * ways of signing in, a context path, and the README's example run as a
 * program of its own.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createClient, ok, ServiceError, type ServiceClient } from '../../client/index.ts';
import { rememberSecret } from '../helpers/secrets.ts';
import { ADMIN, createDatabase, startService, type TestService } from '../helpers/service.ts';
import { readmeExample } from './readme-example.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The ServiceError a call made through ok() was refused with. */
async function refusal(call: Promise<unknown>): Promise<ServiceError> {
  const outcome = await call.then(() => new Error('expected a refusal, the call succeeded'), (e: unknown) => e);
  if (!(outcome instanceof ServiceError)) throw outcome;
  return outcome;
}

describe('typed client: calls against the service', function () {
  this.timeout(120_000);
  let t: TestService;
  let db: string;
  let client: ServiceClient;

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    client = createClient({ baseUrl: t.url, authorization: ADMIN });
  });
  after(() => t?.close());

  it('creates, reads by business key and by technical key, and lists', async () => {
    const scheme = await ok(client.POST('/rest/{db}/schemes', { params: { path: { db } }, body: { _type: 'Scheme', label: 'Sales Model' } }));
    expect(scheme._type).to.equal('Scheme');
    expect(scheme.label).to.equal('Sales Model');

    const created = await client.POST('/rest/{db}/schemes/{key}/classifiers', { params: { path: { db, key: 'Sales Model' } }, body: { _type: 'Classifier', label: 'Customer / Kunde', abstract: true } });
    expect(created.response.status).to.equal(201);
    const customer = created.data!;
    expect(customer.abstract).to.equal(true);
    expect(customer.id).to.match(/^[0-9a-f-]{36}$/);

    const byId = await ok(client.GET('/rest/{db}/classifiers/{key}', { params: { path: { db, key: customer.id! } } }));
    expect(byId.label).to.equal('Customer / Kunde');
    expect(byId._links.self.href).to.contain(`/rest/${db}/`);

    // A label is one path segment, whatever it holds: the client percent-encodes it, a slash included.
    const odd = await ok(client.POST('/rest/{db}/schemes', { params: { path: { db } }, body: { _type: 'Scheme', label: 'Sales/Model 50% ?#' } }));
    expect((await ok(client.GET('/rest/{db}/schemes/{key}', { params: { path: { db, key: 'Sales/Model 50% ?#' } } }))).id).to.equal(odd.id);

    const list = await ok(client.GET('/rest/{db}/schemes/{key}/classifiers', { params: { path: { db, key: 'Sales Model' }, query: { limit: 10 } } }));
    expect(list.total).to.equal(1);
    expect(list._embedded.classifiers.map((c) => c.label)).to.deep.equal(['Customer / Kunde']);

    // An object's history and the caller's jobs are typed calls too.
    const history = await ok(client.GET('/rest/{db}/classifiers/{key}/history', { params: { path: { db, key: customer.id! }, query: { limit: 5 } } }));
    expect(history._embedded.history.map((v) => [v.version, v.operation, v.object.label])).to.deep.equal([[1, 'create', 'Customer / Kunde']]);
    const jobs = await ok(client.GET('/api/{db}/jobs', { params: { path: { db }, query: { mine: true } } }));
    expect(jobs.total).to.equal(0);
  });

  it('replaces and deletes, with the answers the document gives (200, 204)', async () => {
    const organization = await ok(client.POST('/rest/{db}/organizations', { params: { path: { db } }, body: { _type: 'Organization', label: 'Sales' } }));
    const replaced = await client.PUT('/rest/{db}/organizations/{key}', { params: { path: { db, key: organization.id! } }, body: { _type: 'Organization', label: 'Sales', description: 'Sells.' } });
    expect(replaced.response.status).to.equal(200);
    expect(replaced.data!.description).to.equal('Sells.');
    const removed = await client.DELETE('/rest/{db}/organizations/{key}', { params: { path: { db, key: 'Sales' } } });
    expect(removed.response.status).to.equal(204);
    const gone = await client.GET('/rest/{db}/organizations/{key}', { params: { path: { db, key: 'Sales' } } });
    expect(gone.response.status).to.equal(404);
  });

  it('hands back refusals in the specification\'s error format, as `error` or as a ServiceError from ok()', async () => {
    const { data, error, response } = await client.POST('/rest/{db}/schemes', { params: { path: { db } }, body: { _type: 'Scheme', label: 'x'.repeat(1001) } });
    expect(data).to.equal(undefined);
    expect(response.status).to.equal(400);
    expect(error!.statusCode).to.equal(400);
    expect(error!.method).to.equal('POST');
    expect(error!.violations!.map((v) => v.path)).to.include('label');

    const thrown = await refusal(ok(client.GET('/rest/{db}/schemes/{key}', { params: { path: { db, key: 'No Such Scheme' } } })));
    expect(thrown.status).to.equal(404);
    expect(thrown.payload!.statusCode).to.equal(404);
    expect(thrown.message).to.match(/^404 from \/rest\/db_[0-9a-f]+\/schemes\/No%20Such%20Scheme: /);
  });

  it('signs in with the credentials it is given, and never repeats them in an error', async () => {
    const wrong = createClient({ baseUrl: t.url, authorization: { loginId: ADMIN.loginId, password: 'not-the-password-9' } });
    const refused = await refusal(ok(wrong.GET('/rest/{db}/schemes', { params: { path: { db } } })));
    expect(refused.status).to.equal(401);
    expect(refused.payload!.message).to.equal('The credentials were not accepted.');
    expect(`${refused.message} ${JSON.stringify(refused.payload)}`).to.not.contain('not-the-password-9');

    const anonymous = createClient({ baseUrl: t.url });
    expect((await anonymous.GET('/rest/{db}/schemes', { params: { path: { db } } })).response.status).to.equal(401);
    // Health needs no credentials.
    expect((await anonymous.GET('/health')).response.status).to.equal(200);
  });

  it('sends the tenant and language it is given', async () => {
    const german = createClient({ baseUrl: t.url, authorization: ADMIN, language: 'de', tenant: 'No Such Tenant' });
    const { error, response } = await german.GET('/rest/{db}/schemes', { params: { path: { db } } });
    expect(response.status).to.equal(403);
    expect(error!.message).to.not.equal('');
    const english = createClient({ baseUrl: t.url, authorization: ADMIN, language: 'en', tenant: 'No Such Tenant' });
    const inEnglish = await english.GET('/rest/{db}/schemes', { params: { path: { db } } });
    expect(inEnglish.response.status).to.equal(403);
    expect(error!.message).to.not.equal(inEnglish.error!.message);
  });

  it('signs in with an access key', async () => {
    const user = await ok(client.POST('/rest/{db}/users', { params: { path: { db } }, body: { _type: 'User', loginId: 'carla', accessLevel: 'EDITOR', password: 'carla-secret-1' } }));
    const { key } = await ok(client.POST('/rest/{db}/users/{key}/accessKeys', { params: { path: { db, key: user.id! } }, body: { description: 'client test' } }));
    rememberSecret(key, 'access key');
    const byKey = createClient({ baseUrl: t.url, accessKey: key });
    const schemes = await ok(byKey.GET('/rest/{db}/schemes', { params: { path: { db } } }));
    expect(schemes._embedded.schemes.map((s) => s.label)).to.include('Sales Model');
    const wrongKey = createClient({ baseUrl: t.url, accessKey: `${key}x` });
    expect((await wrongKey.GET('/rest/{db}/schemes', { params: { path: { db } } })).response.status).to.equal(401);
  });

  it('runs the README example', async () => {
    const dir = join(root, '.tmp', `client-example-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    try {
      const example = readmeExample()
        .replace(`baseUrl: 'http://127.0.0.1:8080'`, `baseUrl: ${JSON.stringify(t.url)}`)
        .replace(`password: 'change-me-now'`, `password: ${JSON.stringify(ADMIN.password)}`)
        .replace(`const db = 'demo';`, `const db = ${JSON.stringify(await createDatabase(t))};`);
      writeFileSync(join(dir, 'example.ts'), example);
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(dir, 'example.ts')], { cwd: root });
      expect(stdout.trim().split('\n')).to.deep.equal(['Customer Buys from us.', "[ 'Customer' ]", "[ { label: 'Customer' } ]", '404 The Scheme No Such Scheme was not found.']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('typed client: under a context path', function () {
  this.timeout(60_000);
  let t: TestService;
  before(async () => {
    t = await startService({ SERVICE_CONTEXT_PATH: '/mms' });
  });
  after(() => t?.close());

  it('reaches the service through a base URL that ends in the context path, with or without a slash', async () => {
    expect(t.url).to.match(/\/mms$/);
    for (const baseUrl of [t.url, `${t.url}/`]) {
      const client = createClient({ baseUrl, authorization: ADMIN });
      expect((await client.GET('/health')).response.status).to.equal(200);
      const databases = await ok(client.GET('/api/admin/databases'));
      expect(databases).to.be.an('array');
    }
  });
});

describe('typed client: the package', () => {
  it('has one exports map, sorted, with the client, the host module and the models', () => {
    // A second "exports" key (as two branches' merge once left) silently replaces the first in JSON.parse.
    const text = readFileSync(join(root, 'package.json'), 'utf8');
    expect(text.match(/"exports"\s*:/g)).to.have.length(1);
    expect(Object.keys(JSON.parse(text).exports)).to.deep.equal(['./client', './host', './models']);
  });

  it('exports the client as ./client and the generated models as ./models', async () => {
    // The package resolving its own name through its exports, as a dependent's import would.
    const resolve = createRequire(import.meta.url).resolve;
    expect(resolve('metadata-service/client')).to.equal(join(root, 'client', 'index.ts'));
    expect(resolve('metadata-service/models')).to.equal(join(root, 'generated', 'models.gen.ts'));
    const models = await import('metadata-service/models');
    expect(models.typeNames).to.include('Classifier');
  });

  it('imports nothing of the service: only the generated types and openapi-fetch', () => {
    const source = readFileSync(join(root, 'client', 'index.ts'), 'utf8');
    const imports = [...source.matchAll(/^(?:import|export)\b[^;]*?from\s+'([^']+)'/gm)].map((m) => m[1]);
    expect(imports.length).to.be.greaterThan(0);
    expect([...new Set(imports)].sort()).to.deep.equal(['../generated/api.gen.ts', 'openapi-fetch']);
  });
});
