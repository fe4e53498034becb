/**
 * Fuzzing driven by the served OpenAPI document (issue 16): every path and
 * method, with real objects in the path and with malformed variants of it,
 * of its parameters, headers, body and encoding. Any 5xx fails the test and
 * prints the request that caused it; so does a 400 of a megabyte or more.
 * Seeded: every run sends the same requests (FUZZ_SEED picks others).
 */
import http from 'node:http';
import { expect } from 'chai';
import { ADMIN, basic, createDatabase, startService, type TestService } from '../helpers/service.ts';
import { multipart } from '../plugins/profiles/fixtures.ts';
import type { Credentials } from '../auth/fixtures.ts';
import { filled, makeFixtures, operationsOf, type Fixtures, type Operation } from './operations.ts';
import {
  BAD_HEADERS, BAD_QUERIES, BAD_QUERY_VALUES, BAD_SEGMENTS, BAD_TEXTS, badEncodings, brokenBody, ODD_METHODS, PATH_SPOILERS, pick, random, sample, sampleOf,
  type Json, type Random,
} from './values.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 16);

interface Call {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer | string;
  /** What was varied, for the report. */
  variant: string;
}

interface Outcome {
  call: Call;
  status?: number;
  length?: number;
  text?: string;
  error?: string;
}

const auth = (c: Credentials) => basic(c.loginId, c.password);

/** Malformed multipart bodies and YAML a parser may choke on, for the profile upload. */
function profileBodies(rnd: Random): { headers: Record<string, string>; body: Buffer | string; variant: string }[] {
  const part = (body: string, headers = ['Content-Disposition: form-data; name="file"; filename="a.yaml"']) => multipart([{ headers, body }]);
  const yaml = ['a: &a [*a]\n', '!!js/function "x"\n', 'a: !!binary "%%%"\n', '? [a, b]\n: c\n', '<<: *x\n', `a: ${'x'.repeat(200_000)}\n`, '\ufeffClassifier: {}\n',
    'Classifier:\n  customProperties:\n    __proto__: {baseType: STRING}\n', 'Classifier:\n  customProperties:\n    constructor: {baseType: STRING}\n', '%YAML 9.9\n---\na: 1\n',
    'a: 1\n...\n---\nb: 2\n', 'a: "\\ud800"\n', `${'- '.repeat(3000)}x\n`, 'Classifier:\n  properties:\n    toString: {}\n', 'a: !!timestamp 2024-99-99\n', '\u0000'];
  const broken = [
    { body: Buffer.from('--x\r\nContent-Disposition: form-data; name="file"\r\n\r\nabc'), headers: { 'content-type': 'multipart/form-data; boundary=x' }, variant: 'unclosed part' },
    { ...asPart(multipart([{ headers: ['Content-Disposition: form-data; name="a"'], body: 'a' }, { headers: ['Content-Disposition: form-data; name="b"'], body: 'b' }])), variant: 'two parts' },
    { ...asPart(part('a: 1\n', [])), variant: 'no disposition' },
    { ...asPart(part('a: 1\n', ['Content-Disposition: form-data; name="file"; filename*=UTF-8\'\'%FF%00.yaml'])), variant: 'filename*' },
    { ...asPart(part('a: 1\n', ['Content-Disposition: form-data; name="file"', 'Content-Transfer-Encoding: base64'])), variant: 'base64 part' },
    { ...asPart(part('a: 1\n', [`Content-Disposition: form-data; name="${'n'.repeat(20_000)}"`])), variant: 'long name' },
    { body: 'a: 1\n', headers: { 'content-type': 'multipart/form-data; boundary=' }, variant: 'empty boundary' },
  ];
  return [...sample(rnd, yaml, 6).map((y) => ({ ...asPart(part(y)), variant: `yaml ${JSON.stringify(y.slice(0, 40))}` })), ...sample(rnd, broken, 4)];
}

function asPart(m: { body: Uint8Array; contentType: string }) {
  return { body: Buffer.from(m.body), headers: { 'content-type': m.contentType } };
}

/** The calls of one operation: as a client would make it, then spoiled one way at a time. */
function callsOf(op: Operation, f: Fixtures, rnd: Random, doc: Json): Call[] {
  const path = filled(op.template, f, Math.floor(rnd() * 4));
  const json = { 'content-type': 'application/json' };
  const good = op.body ? JSON.stringify(sampleOf(op.body, doc, f.ids)) : undefined;
  const base = (variant: string, over: Partial<Call> = {}): Call => ({
    method: op.method, path, headers: { authorization: auth(ADMIN), ...(good ? json : {}) }, ...(good ? { body: good } : {}), variant, ...over,
  });
  const calls: Call[] = [base('as documented')];
  for (const name of [...op.template.matchAll(/\{(\w+)\}/g)].map((m) => m[1])) {
    for (const segment of sample(rnd, BAD_SEGMENTS, 3)) {
      calls.push(base(`path parameter ${name}`, { path: filled(op.template.replace(`{${name}}`, segment), f, 0) }));
    }
  }
  for (const p of op.parameters.filter((q) => q.in === 'query')) {
    for (const value of sample(rnd, BAD_QUERY_VALUES[p.schema?.type === 'integer' ? 'integer' : 'string'], 2)) calls.push(base(`query ${p.name}`, { path: `${path}?${p.name}=${value}` }));
  }
  for (const query of sample(rnd, BAD_QUERIES, 2)) calls.push(base('query', { path: `${path}?${query}` }));
  for (const name of sample(rnd, Object.keys(BAD_HEADERS), 4)) {
    const value = pick(rnd, BAD_HEADERS[name]);
    calls.push(base(`header ${name}`, { headers: { ...base('').headers, [name]: value } }));
  }
  for (const spoil of sample(rnd, PATH_SPOILERS, 3)) calls.push(base('path', { path: spoil(path) }));
  calls.push(base('method', { method: pick(rnd, ODD_METHODS) }));
  const who: [string, Record<string, string>][] = [['editor of another tenant', { authorization: auth(f.editor), 'service-tenant': 'Second' }], ['reader', { authorization: auth(f.reader) }], ['nobody', {}]];
  const [name, headers] = pick(rnd, who);
  calls.push(base(`as ${name}`, { headers: { ...(good ? json : {}), ...headers } }));
  if (op.multipart) calls.push(...profileBodies(rnd).map((b) => base(`upload ${b.variant}`, { headers: { authorization: auth(ADMIN), ...b.headers }, body: b.body })));
  if (op.body) {
    for (let i = 0; i < 6; i++) calls.push(base('body', { body: brokenBody(rnd, op.body, doc, f.ids) }));
    for (const text of sample(rnd, BAD_TEXTS, 4)) calls.push(base('body text', { body: text }));
    for (const e of sample(rnd, badEncodings(good!), 3)) calls.push(base(`encoding ${JSON.stringify(e.headers)}`, { headers: { authorization: auth(ADMIN), ...e.headers }, body: e.body }));
  }
  return calls;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function send(t: TestService, call: Call): Promise<Outcome> {
  const url = new URL(t.url);
  return new Promise((resolve) => {
    const req = http.request({ agent, host: url.hostname, port: url.port, method: call.method, path: call.path, headers: call.headers, timeout: 20_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks);
        resolve({ call, status: res.statusCode, length: text.length, text: text.subarray(0, 400).toString() });
      });
      res.on('error', (err) => resolve({ call, error: String(err) }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 20 s')));
    req.on('error', (err) => resolve({ call, error: String(err) }));
    req.end(call.body);
  });
}

/** A failure in a form one can paste into a terminal. */
function describeFailure(o: Outcome): string {
  const body = o.call.body === undefined ? '' : typeof o.call.body === 'string' ? o.call.body : `<${o.call.body.length} bytes>`;
  return [`${o.call.method} ${o.call.path.slice(0, 300)}  (${o.call.variant})`, `  headers: ${JSON.stringify(o.call.headers).slice(0, 400)}`,
    `  body: ${JSON.stringify(body.slice(0, 300))}${body.length > 300 ? ` … (${body.length} characters)` : ''}`,
    `  → ${o.error ?? `${o.status}, ${o.length} bytes: ${o.text}`}`].join('\n');
}

/** A connection the service closed while a large body was still being sent is an answer too (413, or a refusal before the body). */
const closedOnLargeBody = (o: Outcome) => !!o.error && /ECONNRESET|EPIPE|socket hang up/.test(o.error) && (o.call.body?.length ?? 0) > 65_536;

describe('fuzzing the interface its OpenAPI document describes', function () {
  // About 25,000 requests, one after another: some 3 minutes on a busy machine of two cores, more beside a parallel run.
  this.timeout(480_000);
  let t: TestService;
  let fixtures: Fixtures;
  let doc: Json;

  before(async () => {
    t = await startService();
    const db = await createDatabase(t);
    fixtures = await makeFixtures(t, db, await createDatabase(t));
    doc = await (await t.request('/specification/openapi.json')).json();
  });
  after(async () => {
    agent.destroy();
    await t.close();
  });

  it(`answers every malformed request with less than 500 (seed ${SEED})`, async () => {
    const rnd = random(SEED);
    const operations = operationsOf(doc);
    expect(operations.length).to.be.above(200);
    const failures: Outcome[] = [];
    let sent = 0;
    const started = Date.now();
    for (const op of operations) {
      for (const call of callsOf(op, fixtures, rnd, doc)) {
        const o = await send(t, call);
        sent++;
        if ((o.error && !closedOnLargeBody(o)) || (o.status ?? 0) >= 500 || (o.status === 400 && o.length! >= 1024 * 1024)) failures.push(o);
      }
    }
    console.log(`      ${sent} requests to ${operations.length} operations in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(failures.map(describeFailure).slice(0, 20).join('\n\n'), `${failures.length} of ${sent} requests failed`).to.equal('');
    expect((await t.request('/health')).status).to.equal(200);
  });
});
