/**
 * Hostile request bodies (issue 16): prototype keys, compression that is not
 * what it says, bodies of callers who may not write, error payloads that
 * would echo megabytes back.
 */
import http from 'node:http';
import zlib from 'node:zlib';
import { expect } from 'chai';
import { ADMIN, basic, createDatabase, startService, type TestService } from '../helpers/service.ts';
import { createUser, secret, type Credentials } from '../auth/fixtures.ts';
import { multipart } from '../plugins/profiles/fixtures.ts';

type Json = Record<string, any>;

/**
 * Announces a body of a megabyte, sends ten bytes of it and waits for the
 * answer: a service that read the body first would never answer.
 */
function answerBeforeBody(t: TestService, method: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: Json }> {
  const url = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ agent: false, host: url.hostname, port: url.port, method, path: `${url.pathname.replace(/\/$/, '')}${path}`, headers: { 'content-length': '1000000', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { text += chunk; });
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode!, body: JSON.parse(text) });
      });
    });
    req.on('error', (err) => { if (!req.destroyed) reject(err); });
    req.setTimeout(3000, () => reject(new Error(`${method} ${path}: no answer before the body was sent`)));
    req.write('{"_type": ');
  });
}

describe('REST interface: hostile bodies', () => {
  let t: TestService;
  let db: string;
  const reader: Credentials = { loginId: 'rita', password: secret('rita-reads-1') };
  const editor: Credentials = { loginId: 'ed', password: secret('ed-edits-12') };

  /**
   * Lets the event loop run after long synchronous work in the test (building or compressing a huge body): the
   * service runs in this process, and an idle keep-alive connection whose timeout passed meanwhile must be closed
   * before the next request is sent, not under it (a busy run got ECONNRESET when gzipSync took over 5 s).
   */
  const breathe = () => new Promise((resolve) => setTimeout(resolve, 100));
  const send = (path: string, init: RequestInit & { json?: unknown; auth?: Credentials | null } = {}) => t.request(path.startsWith('/') ? path : `/rest/${db}/${path}`, init);
  async function expectError(r: Response, status: number, message?: string): Promise<Json> {
    const text = await r.text();
    expect(r.status, text).to.equal(status);
    const body = JSON.parse(text);
    expect(body.statusCode).to.equal(status);
    if (message) expect(body.message).to.equal(message);
    return body;
  }
  const json = { 'content-type': 'application/json' };

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    await createUser(t, db, { ...reader, accessLevel: 'READ_ONLY' });
    await createUser(t, db, { ...editor, accessLevel: 'EDITOR' });
    await send('schemes', { method: 'POST', json: { _type: 'Scheme', label: 'Kept' } });
  });
  after(() => t.close());

  describe('__proto__', () => {
    const refusal = 'The request body holds a property named __proto__, which is never accepted.';

    it('answers 400 on every write path, nested or escaped, and writes nothing', async () => {
      const bodies = [
        '{"_type":"Scheme","label":"P1","__proto__":{"polluted":true}}',
        '{"_type":"Scheme","label":"P2","customProperties":{"__proto__":{"x":1}}}',
        '{"_type":"Scheme","label":"P3","\\u005f_proto__":{"polluted":true}}',
        '[{"_type":"Scheme","label":"P4"},{"__proto__":[]}]',
      ];
      for (const body of bodies) {
        for (const [method, path] of [['POST', 'schemes'], ['PUT', 'schemes/P0'], ['PATCH', 'schemes/Kept'], ['PUT', 'schemes'], ['PATCH', 'schemes']]) {
          await expectError(await send(path, { method, body, headers: json }), 400, refusal);
        }
      }
      await expectError(await send(`/api/${db}/queries/download`, { method: 'PUT', body: '{"sql":"select 1","__proto__":{}}', headers: json }), 400, refusal);
      await expectError(await send('/api/admin/databases', { method: 'POST', body: '{"name":"x","__proto__":{}}', headers: json }), 400, refusal);
      const list = await (await send('schemes')).json();
      expect(list._embedded.schemes.map((s: Json) => s.label)).to.deep.equal(['Kept']);
      expect(({} as Json).polluted).to.equal(undefined);
    });

    it('answers 403 to a reader before looking at the body, and 400 in German on request', async () => {
      await expectError(await send('schemes', { method: 'POST', body: '{"__proto__":{}}', headers: json, auth: reader }), 403);
      const de = await expectError(await send('schemes', { method: 'POST', body: '{"__proto__":{}}', headers: { ...json, 'accept-language': 'de' } }), 400);
      expect(de.message).to.equal('Der Inhalt der Anfrage enthält eine Eigenschaft namens __proto__; sie wird nie angenommen.');
    });

    it('keeps constructor and prototype as what they are: unknown properties', async () => {
      const body = await expectError(await send('schemes', { method: 'POST', json: { _type: 'Scheme', label: 'C', constructor: { prototype: { polluted: true } }, prototype: 1 } }), 400);
      expect(body.violations.map((v: Json) => v.path)).to.deep.equal(['constructor', 'prototype']);
    });
  });

  describe('callers who may not write there', () => {
    it('answer before their body is read: 401 without credentials, 403 below the level the address needs', async () => {
      const auth = (c: Credentials) => ({ authorization: basic(c.loginId, c.password), ...json });
      const cases: [string, string, Record<string, string>, number][] = [
        ['POST', `/rest/${db}/schemes`, json, 401],
        ['POST', `/rest/${db}/schemes`, auth(reader), 403],
        ['PUT', `/rest/${db}/schemes/Kept`, auth(reader), 403],
        ['PATCH', `/rest/${db}/schemes`, auth(reader), 403],
        ['POST', '/api/admin/databases', json, 401],
        // A service-wide call signs in no one but system administrators.
        ['POST', '/api/admin/databases', auth(editor), 401],
        ['PUT', `/api/${db}/queries/download`, auth(editor), 403],
        ['POST', `/api/${db}/queries/download`, json, 401],
        ['PUT', `/api/${db}/profiles/annotations/upload`, { ...auth(editor), 'content-type': 'multipart/form-data; boundary=x' }, 403],
      ];
      for (const [method, path, headers, status] of cases) {
        const answer = await answerBeforeBody(t, method, path, headers);
        expect(answer.status, `${method} ${path}`).to.equal(status);
        expect(answer.body.statusCode).to.equal(status);
      }
    });

    it('answers a reader 403, not 415 or 413, whatever the body', async () => {
      await expectError(await send('schemes', { method: 'POST', body: '<x/>', headers: { 'content-type': 'application/xml' }, auth: reader }), 403);
      await expectError(await send('schemes', { method: 'POST', body: 'x', headers: { ...json, 'content-encoding': 'zstd' }, auth: reader }), 403);
    });
  });

  describe('Content-Encoding', () => {
    const scheme = (label: string) => JSON.stringify({ _type: 'Scheme', label });
    const encoded = (encoding: string, body: Uint8Array | string, auth?: Credentials) =>
      send('schemes', { method: 'POST', body: body as BodyInit, headers: { ...json, 'content-encoding': encoding }, ...(auth ? { auth } : {}) });

    it('takes gzip, deflate and br, in any case, and identity', async () => {
      expect((await encoded('gzip', new Uint8Array(zlib.gzipSync(scheme('Gzip'))))).status).to.equal(201);
      expect((await encoded('GZip ', new Uint8Array(zlib.gzipSync(scheme('Gzip2'))))).status).to.equal(201);
      expect((await encoded('deflate', new Uint8Array(zlib.deflateSync(scheme('Deflate'))))).status).to.equal(201);
      expect((await encoded('br', new Uint8Array(zlib.brotliCompressSync(scheme('Brotli'))))).status).to.equal(201);
      expect((await encoded('identity', scheme('Plain'))).status).to.equal(201);
    });

    it('answers 400 to a body that is not what its encoding says, or ends early', async () => {
      await expectError(await encoded('gzip', scheme('NotGzip')), 400, 'The request body is not valid gzip data.');
      await expectError(await encoded('br', scheme('NotBrotli')), 400, 'The request body is not valid br data.');
      await expectError(await encoded('deflate', new Uint8Array(zlib.gzipSync(scheme('x')).subarray(0, 12))), 400);
      await expectError(await encoded('gzip', new Uint8Array(zlib.gzipSync(scheme('Cut')).subarray(0, 20))), 400, 'The request body is not valid gzip data.');
    });

    it('answers 415 to an encoding it does not know, or to several', async () => {
      const body = await expectError(await encoded('zstd', scheme('Z')), 415, 'The content encoding zstd is not supported; send the body in one of identity, gzip, deflate, br.');
      expect(body.violations).to.equal(undefined);
      await expectError(await encoded('gzip, gzip', new Uint8Array(zlib.gzipSync(zlib.gzipSync(scheme('Twice'))))), 415);
      await expectError(await encoded('x'.repeat(5000), scheme('Long')), 415);
    });

    it('holds the decoded body to the limit: a gzip bomb is 413, read no further than the limit', async () => {
      const bomb = zlib.gzipSync(Buffer.alloc(512 * 1024 * 1024, 0x20));
      await breathe();
      const started = process.cpuUsage();
      await expectError(await encoded('gzip', new Uint8Array(bomb)), 413);
      const used = process.cpuUsage(started);
      expect((used.user + used.system) / 1000, 'ms of CPU').to.be.below(1000);
    });

    it('decodes profile uploads too, and refuses their unknown encodings with 415', async () => {
      const file = 'Classifier:\n  label: Geschäftsobjekt\n';
      const { body, contentType } = multipart([{ headers: ['Content-Disposition: form-data; name="file"; filename="a.yaml"'], body: file }]);
      const put = (encoding: string, bytes: Uint8Array) => send(`/api/${db}/profiles/annotations/upload`, { method: 'PUT', body: bytes as BodyInit, headers: { 'content-type': contentType, 'content-encoding': encoding } });
      let r = await put('gzip', new Uint8Array(zlib.gzipSync(body)));
      expect(r.status, await r.clone().text()).to.equal(200);
      expect(await (await send(`/api/${db}/profiles/annotations/download`)).text()).to.equal(file);
      await expectError(await put('gzip', body), 400, 'The request body is not valid gzip data.');
      await expectError(await put('compress', body), 415);
      r = await put('identity', body);
      expect(await r.json()).to.equal(false);
    });
  });

  describe('error payloads', () => {
    it('lists the first 100 violations and counts the rest, however long the list', async () => {
      const items = `[${Array(300_000).fill('{}').join(',')}]`;
      const r = await send('schemes', { method: 'PUT', body: items, headers: json });
      const text = await r.text();
      expect(r.status).to.equal(400);
      expect(text.length).to.be.below(100_000);
      const body = JSON.parse(text);
      expect(body.violations).to.have.length(100);
      expect(body.violations[0]).to.deep.equal({ path: '0.label', message: 'The property is mandatory.' });
      expect(body.violationsOmitted).to.equal(300_000 - 100);
      expect(Object.keys(body)).to.deep.equal(['statusCode', 'method', 'message', 'violations', 'violationsOmitted', '_links']);
    });

    it('has no violationsOmitted when all violations are listed', async () => {
      const body = await expectError(await send('schemes', { method: 'PUT', json: [{}, {}] }), 400);
      expect(body.violations).to.have.length(2);
      expect(body).not.to.have.property('violationsOmitted');
    });

    it('cuts the texts it echoes: a type name, a path, a content type', async () => {
      const long = 'X'.repeat(3 * 1024 * 1024);
      let body = await expectError(await send('schemes', { method: 'POST', json: { _type: long, label: 'L' } }), 400);
      expect(JSON.stringify(body).length).to.be.below(4000);
      expect(body.violations[0].message).to.match(/^The type X{500}… is unknown\.$/);
      body = await expectError(await send('schemes', { method: 'PUT', json: Array.from({ length: 200 }, () => ({ _type: 'Y'.repeat(20_000) })) }), 400);
      expect(JSON.stringify(body).length).to.be.below(200_000);
      body = await expectError(await send('schemes', { method: 'POST', body: 'x', headers: { 'content-type': `text/${'z'.repeat(8000)}` } }), 415);
      expect(body.message.length).to.be.below(700);
    });
  });

  describe('long arrays and wide objects', () => {
    /** Sends a large body and returns the answer and the CPU the service (in this process) spent on it. */
    async function timed(path: string, method: string, body: string): Promise<{ body: Json; cpuMs: number }> {
      await breathe();
      const started = process.cpuUsage();
      const r = await send(path, { method, body, headers: json });
      const answer = await expectError(r, 400);
      const used = process.cpuUsage(started);
      return { body: answer, cpuMs: (used.user + used.system) / 1000 };
    }
    const ones = (n: number) => Array(n).fill('1').join(',');

    it('refuses two million access rules or groups by their count, not item by item (4 s and 700 MB before)', async () => {
      let { body, cpuMs } = await timed(`tenants/Default/accessRules`, 'PUT', `[${ones(2_000_000)}]`);
      expect(body.violations).to.deep.equal([{ path: '', message: 'The list is too long: at most 1000 entries.' }]);
      expect(cpuMs, 'ms of CPU').to.be.below(1000);
      ({ body, cpuMs } = await timed(`tenants/Default/accessRules`, 'PUT', `[{"action":"DENY","condition":{"groups":[${ones(2_000_000)}]}}]`));
      expect(body.violations).to.deep.equal([{ path: '0.condition.groups', message: 'The list is too long: at most 1000 entries.' }]);
      expect(cpuMs, 'ms of CPU').to.be.below(1000);
      ({ body, cpuMs } = await timed(`tenants/Default/accessRules/explain`, 'POST', `{"loginId":"x","groups":[${ones(2_000_000)}]}`));
      expect(body.violations.map((v: Json) => v.path)).to.deep.equal(['groups']);
      expect(cpuMs, 'ms of CPU').to.be.below(1000);
    });

    it('refuses an object of 800,000 unknown properties listing 100 of them (2.9 s and 450 MB before)', async () => {
      const keys = Array.from({ length: 800_000 }, (_, i) => `"p${i}":1`).join(',');
      const text = `{"_type":"Scheme","label":"Wide",${keys}}`;
      // The baseline, side by side: what parsing the body and listing its keys once cost V8 in this process, now
      // (1.1 s on a quiet machine when this test was written, 1.2-1.9 s on today's CI machine). Two rounds of each,
      // interleaved, the better of each counting: in a busy process a collection can fall into either.
      let baselineMs = Infinity;
      let cpuMs = Infinity;
      for (let round = 0; round < 2; round++) {
        const started = process.cpuUsage();
        expect(Object.keys(JSON.parse(text))).to.have.length(800_002);
        const used = process.cpuUsage(started);
        baselineMs = Math.min(baselineMs, (used.user + used.system) / 1000);
        const answer = await timed('schemes', 'POST', text);
        expect(answer.body.violations).to.have.length(100);
        expect(answer.body.violations[0]).to.deep.equal({ path: 'p0', message: 'The property is unknown.' });
        expect(answer.body.violationsOmitted).to.equal(800_000 - 100);
        cpuMs = Math.min(cpuMs, answer.cpuMs);
      }
      // In all about 1.25 times the baseline, quiet (1.5-2 in a busy run); a walk over every key besides (the locks'
      // look for references did one, 1.2-1.8 s) made it 2.7 times, the generated validator's error per key more.
      expect(cpuMs / baselineMs, `ms of CPU (${cpuMs.toFixed(0)}) over the baseline (${baselineMs.toFixed(0)})`).to.be.below(2);
      const key = await timed(`users/${(await (await send('users?loginId=ed')).json())._embedded.users[0].id}/accessKeys`, 'POST', `{${keys}}`);
      expect(key.body.violations.map((v: Json) => v.path)).to.deep.equal(['p0']);
    });
  });
});
