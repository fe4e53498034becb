import http from 'node:http';
import { expect } from 'chai';
import { ADMIN, basic, createDatabase, startService, type TestService } from '../helpers/service.ts';

type Json = Record<string, any>;

interface RawResponse {
  status: number;
  body: Json;
}

/** Sends the path byte for byte: fetch would normalize `..`, `%2e%2e` and the like before sending. */
function rawRequest(t: TestService, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const url = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname, port: url.port, method, path,
      headers: { authorization: basic(ADMIN.loginId, ADMIN.password), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { text += chunk; });
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode!, body: JSON.parse(text) });
        } catch {
          reject(new Error(`${method} ${path}: ${res.statusCode} with a body that is not JSON: ${text}`));
        }
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** The specification's error payload, exactly: nothing more, nothing less. */
function expectErrorPayload(body: Json, status: number, method: string) {
  expect(body, JSON.stringify(body)).to.include({ statusCode: status, method });
  expect(Object.keys(body).filter((k) => k !== 'violations').sort()).to.deep.equal(['_links', 'message', 'method', 'statusCode']);
  expect(body.message).to.be.a('string').and.not.match(/\{\w+\}/);
  expect(Object.keys(body._links)).to.deep.equal(['self']);
  expect(body._links.self).to.be.a('string');
  for (const v of body.violations ?? []) {
    expect(Object.keys(v).sort()).to.deep.equal(['message', 'path']);
    expect(v.message).to.be.a('string').and.not.match(/\{\w+\}/);
  }
}

describe('REST interface: bad input', () => {
  let t: TestService;
  let db: string;
  let scheme: Json;
  let person: Json;
  let org: Json;

  /** Sends a request and checks the status and the error payload. */
  async function refused(method: string, path: string, status: number, init: RequestInit & { json?: unknown } = {}): Promise<Json> {
    const r = await t.request(path.startsWith('/') ? path : `/rest/${db}/${path}`, { method, ...init });
    const text = await r.text();
    expect(r.status, `${method} ${path}: ${text}`).to.equal(status);
    expect(r.headers.get('content-type')).to.match(/^application\/json/);
    const body = JSON.parse(text);
    expectErrorPayload(body, status, method);
    return body;
  }
  const paths = (body: Json) => body.violations.map((v: Json) => v.path);

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    const post = async (path: string, json: Json) => (await t.request(`/rest/${db}/${path}`, { method: 'POST', json })).json();
    scheme = await post('schemes', { _type: 'Scheme', label: 'Bad' });
    await post('schemes/Bad/classifiers', { _type: 'Classifier', label: 'Taken' });
    org = await post('organizations', { _type: 'Organization', label: 'Org' });
    person = await post('organizations/Org/persons', { _type: 'Person', givenName: 'Pia' });
  });
  after(() => t.close());

  describe('the error payload', () => {
    it('is exactly statusCode, method, message and _links.self as a plain string, in English and German', async () => {
      const r = await t.request(`/rest/${db}/schemes/Nope?x=1`);
      expect(await r.json()).to.deep.equal({
        statusCode: 404, method: 'GET', message: 'The Scheme Nope was not found.', _links: { self: `${t.url}/rest/${db}/schemes/Nope?x=1` },
      });
      const masked = await t.request(`/rest/${db}/schemes/Nope?x=1&access_token=eyJ.secret&api%5Fkey=k1&password`);
      expect((await masked.json())._links.self).to.equal(`${t.url}/rest/${db}/schemes/Nope?x=1&access_token=***&api%5Fkey=***&password`);
      const de = await refused('GET', 'schemes/Nope', 404, { headers: { 'Accept-Language': 'de' } });
      expect(de.message).to.equal('Das Objekt Scheme Nope wurde nicht gefunden.');
    });

    it('carries one violation per offending property, in German on request', async () => {
      const body = await refused('POST', 'schemes/Bad/classifiers', 400, { json: { _type: 'Classifier', label: 'V', abstract: 'no', root: 3 }, headers: { 'Accept-Language': 'de-CH, en;q=0.5' } });
      expect(body.message).to.equal('Das Objekt Classifier kann nicht angelegt werden.');
      expect(body.violations).to.deep.equal([
        { path: 'abstract', message: 'Der Wert muss true oder false sein.' },
        { path: 'root', message: 'Der Wert muss true oder false sein.' },
      ]);
    });
  });

  describe('bodies', () => {
    it('answers 400 to malformed JSON', async () => {
      const body = await refused('POST', 'schemes', 400, { body: '{"_type": "Scheme", ', headers: { 'content-type': 'application/json' } });
      expect(body.message).to.equal('The request body is not valid JSON.');
      await refused('PUT', 'schemes/Bad', 400, { body: "{'_type': 'Scheme'}", headers: { 'content-type': 'application/json' } });
    });

    it('answers 415 to a body that is not JSON', async () => {
      await refused('POST', 'schemes', 415, { body: '<scheme/>', headers: { 'content-type': 'application/xml' } });
      await refused('PUT', 'schemes/Bad', 415, { body: '_type=Scheme', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      await refused('PATCH', 'schemes/Bad', 415, { body: '{}' });
    });

    it('answers 400 to a null body, a string, a number and an empty body', async () => {
      for (const body of ['null', '"Scheme"', '42', '']) {
        await refused('PUT', 'schemes/Bad', 400, { body, headers: { 'content-type': 'application/json' } });
        await refused('POST', 'schemes', 400, { body, headers: { 'content-type': 'application/json' } });
      }
    });

    it('answers 400 to an array where an object is expected, and to an object where an array is expected', async () => {
      let body = await refused('PUT', 'schemes/Bad', 400, { json: [{ _type: 'Scheme', label: 'Bad' }] });
      expect(body.violations).to.deep.equal([{ path: '', message: 'The value must be a JSON object.' }]);
      body = await refused('POST', 'schemes', 400, { json: [] });
      expect(body.violations).to.deep.equal([{ path: '', message: 'The value must be a JSON object.' }]);
      body = await refused('PATCH', 'schemes/Bad/classifiers', 400, { json: { _type: 'Classifier', label: 'X' } });
      expect(body.violations).to.deep.equal([{ path: '', message: 'The value must be a list (a JSON array).' }]);
      body = await refused('PUT', 'schemes/Bad/classifiers', 400, { json: [{ _type: 'Classifier', label: 'X' }, ['nested'], null] });
      expect(body.violations).to.deep.equal([
        { path: '1', message: 'The value must be a JSON object.' },
        { path: '2', message: 'The value must be a JSON object.' },
      ]);
    });

    it('answers 413 to a body over the configured limit, whether announced or streamed', async () => {
      const small = await startService({ SERVICE_BODY_LIMIT: '2048' });
      try {
        const smallDb = await createDatabase(small);
        const big = JSON.stringify({ _type: 'Scheme', label: 'Big', description: 'x'.repeat(4000) });
        let r = await small.request(`/rest/${smallDb}/schemes`, { method: 'POST', body: big, headers: { 'content-type': 'application/json' } });
        let body = await r.json();
        expect(r.status).to.equal(413);
        expectErrorPayload(body, 413, 'POST');
        const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(big)); c.close(); } });
        r = await small.request(`/rest/${smallDb}/schemes`, { method: 'POST', body: stream, headers: { 'content-type': 'application/json' }, duplex: 'half' } as RequestInit);
        body = await r.json();
        expect(r.status).to.equal(413);
        expectErrorPayload(body, 413, 'POST');
        r = await small.request(`/rest/${smallDb}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Small' } });
        expect(r.status).to.equal(201);
      } finally {
        await small.close();
      }
    });
  });

  describe('types', () => {
    it('answers 400 to an unknown or abstract _type, and to a missing one on POST', async () => {
      let body = await refused('POST', 'schemes', 400, { json: { _type: 'Schema', label: 'X' } });
      expect(body.violations).to.deep.equal([{ path: '_type', message: 'The type Schema is unknown.' }]);
      body = await refused('POST', 'assets', 400, { json: { _type: 'Asset', label: 'X' } });
      expect(paths(body)).to.deep.equal(['_type']);
      body = await refused('POST', 'schemes', 400, { json: { label: 'X' } });
      expect(body.violations).to.deep.equal([{ path: '_type', message: 'The property _type is mandatory.' }]);
      await refused('POST', 'schemes', 400, { json: { _type: 7, label: 'X' } });
      // Found by the fuzz test: an object that cannot be made text, and names of Object.prototype, were a 500.
      await refused('POST', 'organizations/Org/organizations', 400, { json: { _type: { constructor: 1, toString: 'x', valueOf: [] }, label: 'X' } });
      for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
        body = await refused('POST', 'schemes', 400, { json: { _type: name, label: 'X' } });
        expect(paths(body), name).to.deep.equal(['_type']);
      }
    });

    it('requires _type on POST and wherever the list holds several types; infers it where nothing else fits', async () => {
      let body = await refused('PUT', 'assets/0b5f3a52-8c1e-4f0e-9d7e-5a1c7f0e2b12', 400, { json: { label: 'Which' } });
      expect(body.violations).to.deep.equal([{ path: '_type', message: 'The property _type is mandatory.' }]);
      body = await refused('POST', 'schemes/Bad/classifiers', 400, { json: { label: 'New' } });
      expect(paths(body)).to.deep.equal(['_type']);
      let r = await t.request(`/rest/${db}/schemes/Bad/classifiers/Inferred`, { method: 'PUT', json: { title: 'x' } });
      expect((await r.json())._type).to.equal('Classifier');
      r = await t.request(`/rest/${db}/assets/${scheme.id}`, { method: 'PATCH', json: { title: 'merged' } });
      expect(r.status).to.equal(200);
    });

    it('answers 400 to a _type that does not belong in the list', async () => {
      let body = await refused('POST', 'schemes/Bad/classifiers', 400, { json: { _type: 'Person', givenName: 'P', agentOf: org.id } });
      expect(body.violations).to.deep.equal([{ path: '_type', message: 'An object of type Person does not belong in the list classifiers.' }]);
      body = await refused('PUT', 'schemes/Bad/classifiers', 400, { json: [{ _type: 'Classifier', label: 'Fine' }, { _type: 'Scheme', label: 'Wrong' }] });
      expect(paths(body)).to.deep.equal(['1._type']);
      await refused('PUT', 'schemes/Bad/classifiers/Taken', 400, { json: { _type: 'Collection', label: 'Taken' } });
    });

    it('answers 400 to a change of the type of an existing object, through any path', async () => {
      let body = await refused('PUT', `assets/${person.id}`, 400, { json: { _type: 'Group', label: 'Pia' } });
      expect(body.violations).to.deep.equal([{ path: '_type', message: 'The type of an existing object cannot be changed.' }]);
      body = await refused('PATCH', `assets/${scheme.id}`, 400, { json: { _type: 'Organization' } });
      expect(paths(body)).to.deep.equal(['_type']);
    });

    it('answers 400 to properties of the wrong type, values not allowed and unknown properties', async () => {
      const body = await refused('POST', 'schemes/Bad/classifiers', 400, { json: { _type: 'Classifier', label: 42, title: ['x'], status: 'DONE', colour: 'red' } });
      expect(body.violations).to.deep.equal([
        { path: 'colour', message: 'The property is unknown.' },
        { path: 'label', message: 'The value must be text.' },
        { path: 'status', message: 'The value is not allowed; allowed: WORKING, SUBMITTED, ACCEPTED, REJECTED, FINAL, INACTIVE, PUBLISHED, DELETENEW, INTERMINATION, ARCHIVED.' },
        { path: 'title', message: 'The value must be text.' },
      ]);
      const attr = await refused('POST', 'schemes/Bad/classifiers/Taken/attributes', 400, { json: { _type: 'BusinessAttribute', label: 'A', minCardinality: 1.5, identifying: 'true' } });
      expect(paths(attr)).to.deep.equal(['identifying', 'minCardinality']);
    });
  });

  describe('references', () => {
    it('answers 400 to a reference that is not a UUID', async () => {
      for (const bad of ['abc', 'urn:uuid:0b5f3a52-8c1e-4f0e-9d7e-5a1c7f0e2b11', 42, { id: person.id }]) {
        const body = await refused('POST', 'schemes/Bad/attributedTo', 400, { json: { _type: 'Attribution', attributedTo: bad } });
        expect(paths(body), JSON.stringify(bad)).to.deep.equal(['attributedTo']);
      }
    });

    it('answers 400 to a reference to an object that does not exist or has the wrong type', async () => {
      let body = await refused('POST', 'schemes/Bad/attributedTo', 400, { json: { _type: 'Attribution', attributedTo: '0b5f3a52-8c1e-4f0e-9d7e-5a1c7f0e2b11' } });
      expect(body.violations).to.deep.equal([{ path: 'attributedTo', message: 'No Asset with this technical key exists.' }]);
      body = await refused('POST', 'persons', 400, { json: { _type: 'Person', givenName: 'X', agentOf: scheme.id } });
      expect(paths(body)).to.deep.equal(['agentOf']);
    });

    it('accepts a reference in upper case and keeps it in lower case', async () => {
      const r = await t.request(`/rest/${db}/schemes/Bad/attributedTo`, { method: 'POST', json: { _type: 'Attribution', attributedTo: person.id.toUpperCase() } });
      expect(r.status, await r.clone().text()).to.equal(201);
      expect((await r.json()).attributedTo).to.equal(person.id);
    });

    it('answers 400 when an object under a parent names another parent', async () => {
      const other = await (await t.request(`/rest/${db}/organizations`, { method: 'POST', json: { _type: 'Organization', label: 'Other Org' } })).json();
      const body = await refused('POST', 'organizations/Org/persons', 400, { json: { _type: 'Person', givenName: 'Q', agentOf: other.id } });
      expect(paths(body)).to.deep.equal(['agentOf']);
    });
  });

  describe('paths', () => {
    const cases: [string, number][] = [
      ['schemes/Bad/..', 400],
      ['schemes/Bad/../..', 400],
      ['schemes/Bad/%2e%2e', 400],
      ['schemes/%2E%2E/classifiers', 400],
      ['schemes/.', 400],
      ['schemes//Bad', 400],
      ['schemes/Bad//classifiers', 400],
      ['schemes/Bad/', 400],
      ['schemes/%E0%A4%A', 400],
      ['schemes/%zz', 400],
      ['schemes/%', 400],
      ['schemes/Bad%00', 400],
      ['schemes%2fBad', 404],
      ['schemes/Bad%2fclassifiers', 404],
      ['schemes/Bad;jsessionid=1', 404],
      ['schemes;x=1/Bad', 404],
      ['schemes/Bad/classifiers/Taken;', 404],
    ];
    for (const [path, status] of cases) {
      it(`answers ${status} to /rest/<db>/${path}`, async () => {
        const get = await rawRequest(t, 'GET', `/rest/${db}/${path}`);
        expect(get.status, JSON.stringify(get.body)).to.equal(status);
        expectErrorPayload(get.body, status, 'GET');
        if (status === 404) return; // a valid path: PUT would create there
        const put = await rawRequest(t, 'PUT', `/rest/${db}/${path}`, JSON.stringify({ _type: 'Scheme' }));
        expect(put.status, JSON.stringify(put.body)).to.equal(status);
        expectErrorPayload(put.body, status, 'PUT');
      });
    }

    it('answers 400 to malformed percent-encoding in the database name and before the database', async () => {
      expectErrorPayload((await rawRequest(t, 'GET', '/rest/%E0%A4%A/schemes')).body, 400, 'GET');
      expect((await rawRequest(t, 'GET', '/rest/%E0%A4%A/schemes')).status).to.equal(400);
      const r = await rawRequest(t, 'GET', '/%E0%A4%A');
      expect(r.status).to.be.oneOf([400, 404]);
      expectErrorPayload(r.body, r.status, 'GET');
    });

    it('treats a semicolon in a label as part of the label', async () => {
      const r = await t.request(`/rest/${db}/schemes/Bad/classifiers/A;B`, { method: 'PUT', json: { _type: 'Classifier' } });
      expect(r.status).to.equal(201);
      expect((await r.json()).label).to.equal('A;B');
      expect((await t.request(`/rest/${db}/schemes/Bad/classifiers/A%3BB`)).status).to.equal(200);
    });
  });

  describe('labels', () => {
    it('finds no object under a very long label and refuses to write one (400 on label)', async () => {
      const long = 'L'.repeat(1500);
      await refused('GET', `schemes/Bad/classifiers/${long}`, 404);
      let body = await refused('PUT', `schemes/Bad/classifiers/${long}`, 400, { json: { _type: 'Classifier' } });
      expect(paths(body)).to.deep.equal(['label']);
      body = await refused('POST', 'schemes/Bad/classifiers', 400, { json: { _type: 'Classifier', label: 'Ü'.repeat(5000) } });
      expect(body.violations).to.deep.equal([{ path: 'label', message: 'The value is too long: at most 1000 characters.' }]);
    });

    it('answers 400 to an empty label or one of blanks only', async () => {
      let body = await refused('POST', 'schemes/Bad/classifiers', 400, { json: { _type: 'Classifier', label: '' } });
      expect(paths(body)).to.deep.equal(['label']);
      body = await refused('POST', 'schemes/Bad/classifiers', 400, { json: { _type: 'Classifier', label: '   ' } });
      expect(paths(body)).to.deep.equal(['label']);
    });

    it('answers 409 with a violation on label to a label that is taken in the list, in English and German', async () => {
      let body = await refused('POST', 'schemes/Bad/classifiers', 409, { json: { _type: 'Classifier', label: 'Taken' } });
      expect(body).to.deep.include({ message: 'The Classifier cannot be created: the label is already taken.', violations: [{ path: 'label', message: 'The label is already taken.' }] });
      body = await refused('POST', 'schemes/Bad/classifiers', 409, { json: { _type: 'Classifier', label: 'Taken' }, headers: { 'Accept-Language': 'de' } });
      expect(body.violations).to.deep.equal([{ path: 'label', message: 'Der Name ist bereits vergeben.' }]);
      const other = await (await t.request(`/rest/${db}/schemes/Bad/classifiers`, { method: 'POST', json: { _type: 'Classifier', label: 'Free' } })).json();
      body = await refused('PATCH', `classifiers/${other.id}`, 409, { json: { label: 'Taken' } });
      expect(paths(body)).to.deep.equal(['label']);
      body = await refused('PATCH', 'schemes/Bad/classifiers', 409, { json: [{ id: other.id, label: 'Taken' }] });
      expect(paths(body)).to.deep.equal(['0.label']);
      // The same label in another list or under another parent is no clash.
      expect((await t.request(`/rest/${db}/schemes/Bad/enumerations`, { method: 'POST', json: { _type: 'Enumeration', label: 'Taken' } })).status).to.equal(201);
    });

    it('answers 409 with a violation on id to a technical key that is taken', async () => {
      const body = await refused('POST', 'schemes', 409, { json: { _type: 'Scheme', label: 'Other', id: scheme.id } });
      expect(paths(body)).to.deep.equal(['id']);
      await refused('PUT', `schemes/Bad/classifiers/${scheme.id}`, 409, { json: { _type: 'Classifier', label: 'Other' } });
      await refused('PUT', 'schemes/Bad/enumerations', 409, { json: [{ _type: 'Enumeration', id: person.id, label: 'Other' }] });
      expect((await t.request(`/rest/${db}/persons/${person.id}`)).status).to.equal(200);
    });
  });

  describe('query parameters', () => {
    it('answers 400 to a limit that is not a positive integer', async () => {
      for (const limit of ['ten', '0', '-1', '2.5', '1e2', '', '99999999999']) {
        const body = await refused('GET', `schemes?limit=${limit}`, 400);
        expect(body.message, limit).to.equal('The parameter limit is invalid.');
      }
      await refused('GET', 'schemes?limit=1&limit=2', 400);
    });

    it('answers 400 to a cursor that is garbage or not one the service made', async () => {
      const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      for (const cursor of ['garbage', '%%%', forged(['a', '------------------------------------']), forged({ a: 1 }), forged(['a', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz']), forged([1, 2])]) {
        const body = await refused('GET', `schemes?limit=2&cursor=${encodeURIComponent(cursor)}`, 400);
        expect(body.message, cursor).to.equal('The parameter cursor is invalid.');
      }
    });

    it('answers 400 to a version that is not a number', async () => {
      await refused('GET', 'schemes?version=abc', 400);
      await refused('GET', 'schemes/Bad', 400, { headers: { 'Accept-Version': '2024-01-01' } });
      // The query interface's rule too: no later than a date can be (8.64e15 ms).
      await refused('GET', 'schemes/Bad?version=8640000000000001', 400);
      expect((await t.request(`/rest/${db}/schemes/Bad?version=8640000000000000`)).status).to.equal(200);
    });
  });

  describe('methods', () => {
    it('answers 405 to methods the interface does not have', async () => {
      await refused('OPTIONS', 'schemes/Bad', 405);
      const trace = await rawRequest(t, 'TRACE', `/rest/${db}/schemes`);
      expect(trace.status).to.equal(405);
      expectErrorPayload(trace.body, 405, 'TRACE');
    });
  });
});
