/**
 * The contract test (issue 17): the OpenAPI document the service serves is
 * what the service does. Every operation of the document is called live,
 * through a real port, as a client following the document would call it and
 * in the main ways it goes wrong (no credentials, a caller with too little
 * access, a key that names nothing, a body that breaks the schema, a body of
 * another media type, a stale If-Match, a clash); every answer's status must
 * be declared for that path and method, and its body must validate against
 * the schema declared for that status (./checker.ts). Each operation must
 * also succeed at least once. And every route the runtime registers must be
 * in the document, so that a call added without describing it fails here.
 * On PostgreSQL too, with TEST_DATABASE_URL.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type Router from '@koa/router';
import { ADMIN, createDatabase, startService, type TestService } from '../helpers/service.ts';
import { rememberSecret } from '../helpers/secrets.ts';
import { filled, intactOf, makeFixtures, operationsOf, type Fixtures, type Operation } from '../fuzz/operations.ts';
import { resolve, type Json } from '../fuzz/values.ts';
import { ContractChecker } from './checker.ts';

interface Call {
  variant: string;
  path: string;
  init: RequestInit & { json?: unknown; auth?: { loginId: string; password: string } | null };
}

/** A body a client following the document would send: the type, what is mandatory, fresh labels, references to real objects. */
function goodValue(schema: Json, doc: Json, ids: Record<string, string>, fresh: () => string, depth = 0, type?: string, topLevel = false): unknown {
  const s = resolve(schema, doc);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  if (s.oneOf || s.anyOf) {
    // Of several types, the one the object at the address has: its type cannot change.
    const branches: Json[] = s.oneOf ?? s.anyOf;
    const own = branches.find((b) => resolve(b, doc).properties?._type?.const === type) ?? branches[0];
    // An optional property is `anyOf: [value, null]` with the description (and the referenced type) outside.
    const branch = resolve(own, doc);
    return goodValue({ ...branch, description: branch.description ?? s.description }, doc, ids, fresh, depth, type, topLevel);
  }
  const kind = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  switch (kind) {
    case 'object': {
      const out: Json = {};
      const ownType = s.properties?._type?.const;
      let parented = false;
      for (const [name, property] of Object.entries<Json>(s.properties ?? {})) {
        // A parent reference is mandatory where an object is created at the top level of its type (`POST /rest/{db}/attributes`):
        // one of them (decisions §7.1), the one the fixtures have a parent for in a model of the kind that holds the type.
        const owner = topLevel && /Names the parent object/.test(property.description ?? '');
        if (owner) {
          const parent = ids[`${ownType}.${name}`];
          const last = !Object.keys(s.properties).slice(Object.keys(s.properties).indexOf(name) + 1)
            .some((n) => /Names the parent object/.test(s.properties[n].description ?? '') && ids[`${ownType}.${n}`]);
          if (!parented && (parent || last)) out[name] = parent ?? goodValue(property, doc, ids, fresh, depth + 1);
          parented ||= name in out;
          continue;
        }
        const mandatory = (s.required ?? []).includes(name) || /Mandatory/.test(property.description ?? '') || name === 'label';
        if (mandatory && !property.readOnly && depth < 4) out[name] = goodValue(property, doc, ids, fresh, depth + 1);
      }
      return out;
    }
    case 'array': return [goodValue(s.items ?? {}, doc, ids, fresh, depth + 1, type, topLevel)];
    case 'integer': return s.minimum ?? 1;
    case 'number': return 1.5;
    case 'boolean': return true;
    case 'string': {
      if (s.format === 'uuid') return ids[/Technical key of an? (\w+)/.exec(s.description ?? '')?.[1] ?? ''] ?? randomUUID();
      return fresh();
    }
    default: return null;
  }
}

/** Bodies of the calls whose schema alone does not make a good one. */
function specialBody(operationId: string, f: Fixtures): unknown {
  switch (operationId) {
    case 'createDatabase': return { name: `contract_${randomUUID().slice(0, 8)}` };
    case 'runQuery': case 'startQueryJob': return { sql: 'select label from scheme_view' };
    case 'setQuerySettings': return { statementTimeout: 60_000 };
    case 'createAccessKey': return { description: 'contract' };
    case 'replaceAccessRules': return [{ condition: { groups: ['contract'] }, action: 'GRANT', accessLevel: 'READ_ONLY' }];
    case 'explainAccessRules': return { loginId: f.reader.loginId, groups: ['contract'] };
    case 'createWebSession': return { database: f.db, loginId: ADMIN.loginId, password: ADMIN.password };
    case 'switchWebSessionTenant': return { tenant: 'Default' };
    default: return undefined;
  }
}

const ANNOTATIONS = 'Classifier:\n  customProperties:\n    contractNote:\n      baseType: STRING\n';

function uploadBody(): FormData {
  const form = new FormData();
  form.append('file', new Blob([ANNOTATIONS], { type: 'application/yaml' }), 'annotations.yaml');
  return form;
}

/** Whether the call replaces or removes what the fixtures hold: it gets fixtures of its own. */
const usesUp = (op: Operation) => op.method === 'DELETE' || (op.method === 'PUT' && op.template.startsWith('/rest/') && !/\}$/.test(op.template));

/**
 * Whether a call may change the fixtures' people (the second tenant, the
 * users, the access key, the query job): any write to those addresses, a
 * database's removal. The fixtures made after any other call take them over
 * (makeFixtures's `people`) instead of hashing two passwords again.
 */
const changesPeople = (op: Operation) => !['GET', 'HEAD'].includes(op.method)
  && (/^\/rest\/\{db\}\/(tenants|users|accessKeys)\b/.test(op.template) || /^\/api\/(admin\/databases|\{db\}\/(jobs|queries))\b/.test(op.template));

/**
 * The address of a call: technical keys of the fixtures; the tenant is the
 * second one (the default tenant is neither renamed nor removed, others
 * still need it), a user the one of the login tenant (a system administrator
 * signed in to the default tenant reaches its users by address).
 */
function pathOf(template: string, f: Fixtures): string {
  const choice = template.startsWith('/rest/{db}/tenants/{key}') ? 1 : template.startsWith('/rest/{db}/users/{key}') ? 2 : 0;
  return filled(template, f, choice);
}

/**
 * A list write at the top level names an object the list holds, with its own values where the body has them:
 * most types are created only below their parent, and a new label would rename a tenant the fixtures use.
 */
function asExisting(body: unknown, existing: Json | undefined): unknown {
  if (!existing || !Array.isArray(body)) return body;
  const item = body[0] as Json;
  const own = Object.fromEntries(Object.keys(item).filter((k) => existing[k] !== undefined && existing[k] !== null).map((k) => [k, existing[k]]));
  return [{ ...item, ...own, id: existing.id }];
}

/** The pages' session of the fixtures' database, as a browser holds it: the cookie and the anti-forgery token. */
async function webSession(t: TestService, db: string): Promise<WebPage> {
  const r = await t.request('/web/session', { method: 'POST', auth: null, json: { database: db, ...ADMIN } });
  expect(r.status, 'sign-in to the pages').to.equal(200);
  const { csrfToken } = await r.json();
  const cookie = r.headers.getSetCookie()[0].split(';')[0];
  rememberSecret(cookie.slice(cookie.indexOf('=') + 1), 'session cookie');
  rememberSecret(csrfToken, 'anti-forgery token');
  return { headers: { cookie, 'x-csrf-token': csrfToken } };
}

/** What a call of the pages needs: their session's headers, or the name of a built file. */
interface WebPage {
  headers?: Record<string, string>;
  asset?: string;
}

async function webPageOf(t: TestService, op: Operation, db: string): Promise<WebPage | undefined> {
  if (op.template === '/web/session' && op.method !== 'POST') return webSession(t, db);
  if (op.template === '/web/assets/{name}') {
    const html = await (await t.request('/web/', { auth: null })).text();
    return { asset: /\/web\/assets\/([^"]+\.js)"/.exec(html)![1] };
  }
  return undefined;
}

function callsOf(op: Operation, doc: Json, f: Fixtures, fresh: () => string, type?: string, existing?: Json, web?: WebPage): Call[] {
  const operation = doc.paths[op.template][op.method.toLowerCase()];
  const path = (web?.asset ? op.template.replace('{name}', web.asset) : pathOf(op.template, f))
    + (operation.operationId === 'runQuery' ? '?format=JSON' : operation.operationId === 'searchObjects' ? '?q=Fuzz' : web?.headers ? `?database=${f.db}` : '');
  const body = op.body ? specialBody(operation.operationId, f) ?? asExisting(goodValue(op.body, doc, f.ids, fresh, 0, type, /^\/rest\/\{db\}\/\w+$/.test(op.template)), existing) : undefined;
  const good: Call['init'] = {
    method: op.method, ...(body !== undefined ? { json: body } : {}), ...(op.multipart ? { body: uploadBody() } : {}), ...(web?.headers ? { headers: web.headers } : {}),
  };
  const calls: Call[] = [{ variant: 'as documented', path, init: good }];
  if (op.method === 'POST' && op.template.startsWith('/rest/') && body && !Array.isArray(body)) calls.push({ variant: 'the same again', path, init: good });
  if (operation.security?.length !== 0) calls.push({ variant: 'no credentials', path, init: { ...good, auth: null } });
  calls.push({ variant: 'read-only caller', path, init: { ...good, auth: f.reader } });
  const param = /\{(key|job|accessKey|name)\}/.exec(op.template);
  if (param) {
    const missing = param[1] === 'name' ? 'nosuchdatabase' : randomUUID();
    calls.push({ variant: `no such ${param[1]}`, path: pathOf(op.template.replace(param[0], missing), f), init: { ...good, ...(op.multipart ? { body: uploadBody() } : {}) } });
  }
  if (op.body) {
    calls.push({ variant: 'body against the schema', path, init: { method: op.method, json: { contractUnknown: 1 } } });
    calls.push({ variant: 'body of another media type', path, init: { method: op.method, body: 'sql=1', headers: { 'content-type': 'text/plain' } } });
  }
  if (/\{key\}$/.test(op.template) && op.method !== 'GET') {
    calls.push({ variant: 'stale If-Match', path, init: { ...good, headers: { 'if-match': 'W/"987654"' } } });
  }
  return calls;
}

describe('the OpenAPI document is what the service does (contract)', function () {
  // Every operation of the document over fixtures of every kind: 3 to 5 minutes alone, up to 10 beside a parallel run on two cores.
  this.timeout(1_200_000);
  let t: TestService;
  let doc: Json;
  let checker: ContractChecker;

  before(async () => {
    t = await startService();
    doc = await (await t.request('/specification/openapi.json')).json();
    checker = await ContractChecker.of(doc);
  });
  after(() => t.close());

  describe('the checker', () => {
    const health = { template: '/health', method: 'GET', contentType: 'application/json' };
    it('accepts an answer the document declares', () => {
      expect(checker.check({ ...health, status: 200, body: '{"status":"ok"}' })).to.deep.equal([]);
    });
    it('refuses a body that does not match the declared schema', () => {
      expect(checker.check({ ...health, status: 200, body: '{"status":1}' }).join()).to.match(/must be string/);
      expect(checker.check({ template: '/api/admin/databases', method: 'GET', status: 401, contentType: 'application/json', body: '{"message":"x"}' }).join())
        .to.match(/must have required property 'statusCode'/);
    });
    it('refuses a status, a content type or a call the document does not declare', () => {
      expect(checker.check({ ...health, status: 418, body: '' }).join()).to.match(/status not declared/);
      expect(checker.check({ ...health, status: 200, contentType: 'text/plain', body: 'ok' }).join()).to.match(/content type text\/plain not declared/);
      expect(checker.check({ ...health, template: '/nowhere', status: 200, body: '' }).join()).to.match(/not in the document/);
    });
  });

  it('documents every route the runtime registers', () => {
    const documented = new Set(Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).filter((m) => m !== 'parameters').map((m) => `${m.toUpperCase()} ${shape(path)}`)));
    const registered = [t.service.routes.api, t.service.routes.plugins].flatMap((router: Router) => router.stack.flatMap((layer) =>
      layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${shape(String(layer.path).replace(/:(\w+)/g, '{$1}'))}`)));
    expect(registered.length).to.be.above(5);
    expect(registered.filter((r) => !documented.has(r)), 'registered, not documented').to.deep.equal([]);
    // REST extensions (access keys, access rules) and the metamodel name lists below /rest/<db>.
    const restSegments = new Set(Object.keys(doc.paths).filter((p) => p.startsWith('/rest/')).flatMap((p) => p.split('/')));
    expect([...t.service.routes.restListNames].filter((name) => !restSegments.has(name)), 'list names not documented').to.deep.equal([]);
  });

  it('answers every operation of the document as the document declares, and each at least once with success', async () => {
    const db = await createDatabase(t);
    let fixtures = await makeFixtures(t, db, await createDatabase(t));
    await completed(t, db, fixtures.job);
    let round = 0;
    let labels = 0;
    const fresh = () => `contract-${++labels}-value`;
    const operations = operationsOf(doc);
    expect(operations.length).to.be.above(200);
    const problems: string[] = [];
    const succeeded = new Set<string>();
    const documented = new Map<string, string>();
    let sent = 0;
    let spent = false;
    let peopleChanged = false;
    // The addresses called since the fixtures were made, when one call alone used them (none: several did).
    let calledSince: string[] | undefined;
    for (const op of operations) {
      // A call that replaces or removes what the fixtures hold gets fixtures of its own, and leaves the next call fresh ones. Where one
      // call alone used the earlier ones, the objects it left as they were made (intactOf) are taken over and only the others made again.
      if (usesUp(op) || spent) {
        round++;
        const spare = op.template === '/api/admin/databases/{name}' ? await createDatabase(t) : fixtures.spare;
        const fresh = (usesUp(op) && changesPeople(op)) || peopleChanged;
        const keep = calledSince ? await intactOf(t, fixtures, calledSince) : undefined;
        fixtures = await makeFixtures(t, db, spare, `x${round}`, fresh ? undefined : fixtures.people, keep);
        if (fresh) await completed(t, db, fixtures.job);
        peopleChanged = false;
        calledSince = [];
      } else {
        calledSince = undefined;
      }
      spent = usesUp(op);
      peopleChanged ||= changesPeople(op);
      // A write of an object sends it as its own type; a list write at the top level, as the first object of the list.
      let type: string | undefined;
      let existing: Json | undefined;
      if (op.method !== 'GET' && /\{key\}$/.test(op.template)) type = (await (await t.request(pathOf(op.template, fixtures))).json())._type;
      if ((op.method === 'PUT' || op.method === 'PATCH') && /^\/rest\/\{db\}\/\w+$/.test(op.template)) {
        // A PUT of the schemes names the fixtures' business model: the list's first (by label) may be a model of another kind, which a
        // replacement without `modelType` turns into a business model, refused (400) while it holds what only its own kind may hold.
        const own = op.method === 'PUT' && op.template === '/rest/{db}/schemes' ? fixtures.keys.schemes[0] : undefined;
        const read = own ? await t.request(`/rest/${fixtures.db}/schemes/${own}`) : undefined;
        expect(read?.status ?? 200, `the fixtures' scheme ${own}`).to.equal(200);
        if (read) existing = await read.json();
        else existing = (Object.values((await (await t.request(pathOf(op.template, fixtures))).json())._embedded ?? {})[0] as Json[] | undefined)?.[0];
        type = existing?._type;
      }
      for (const call of callsOf(op, doc, fixtures, fresh, type, existing, await webPageOf(t, op, fixtures.db))) {
        calledSince?.push(call.path);
        const r = await t.request(call.path, call.init);
        const body = await r.text();
        sent++;
        const answer = { template: op.template, method: op.method, status: r.status, contentType: r.headers.get('content-type'), body };
        problems.push(...checker.check(answer).map((p) => `${p}  [${call.variant}: ${call.init.method} ${call.path}]`));
        if (call.variant !== 'as documented') continue;
        if (r.status < 300) succeeded.add(`${op.method} ${op.template}`);
        else documented.set(`${op.method} ${op.template}`, `${call.init.method} ${call.path} ${JSON.stringify(call.init.json ?? null).slice(0, 200)} → ${r.status} ${body.slice(0, 300)}`);
      }
    }
    console.log(`      ${sent} calls to ${operations.length} operations`);
    if (process.env.CONTRACT_REPORT) (await import('node:fs')).writeFileSync(process.env.CONTRACT_REPORT, problems.join('\n'));
    expect(problems.slice(0, 30).join('\n'), `${problems.length} answers break the contract`).to.equal('');
    // Deleting every tenant always includes the default one: the document says it answers 409, and it must.
    expect(documented.get('DELETE /rest/{db}/tenants')).to.match(/→ 409 .*is the default tenant of the database/);
    // The pages' OpenID Connect sign-in answers only with redirects, and only with OpenID Connect on (test/plugins/web/oidc.spec.ts).
    const redirectsOnly = new Set(['GET /web/login', 'GET /web/auth']);
    const failed = operations.map((o) => `${o.method} ${o.template}`).filter((o) => !succeeded.has(o) && o !== 'DELETE /rest/{db}/tenants' && !redirectsOnly.has(o))
      .map((o) => documented.get(o) ?? o);
    expect(failed.join('\n'), `${failed.length} operations never succeeded`).to.equal('');
  });
});

/** A path with its parameters' names left out: `/api/{db}/jobs/{id}` and `/api/{db}/jobs/{job}` are one address. */
function shape(path: string): string {
  // `{*page}`: a router's parameter that may span several segments.
  return path.replace(/\{\*?\w+\}/g, '{}');
}

/**
 * Waits until the fixture's query job has finished, so that its result can be downloaded: up to a minute (it
 * finishes within a second on a quiet machine; at load 12, with both suites and other work on two cores, 10 s
 * were seen to pass).
 */
async function completed(t: TestService, db: string, job: string) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if ((await t.request(`/api/${db}/jobs/${job}/statistics`)).status === 200) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`job ${job} did not finish within a minute`);
}
