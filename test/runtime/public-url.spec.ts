/**
 * SERVICE_PUBLIC_URL (issue 16): with it, every link the service writes
 * starts there, whatever Host or X-Forwarded-* a client sends.
 */
import http from 'node:http';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../runtime/config.ts';
import { ADMIN, basic, createDatabase, startService, type TestService } from '../helpers/service.ts';

type Json = Record<string, any>;

const HOSTILE = { host: 'evil.example', 'x-forwarded-host': 'evil-forwarded.example', 'x-forwarded-proto': 'http' };

/** A request with the headers fetch will not send (Host), and with the request target as given (absolute form too). */
function raw(t: TestService, method: string, target: string, body?: unknown): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  const url = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname, port: url.port, method, path: target, agent: false,
      headers: { ...HOSTILE, authorization: basic(ADMIN.loginId, ADMIN.password), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe('SERVICE_PUBLIC_URL', () => {
  describe('the setting', () => {
    const load = (value: string) => loadConfig({ SERVICE_PUBLIC_URL: value });

    it('takes an http or https origin, with or without port and final slash', () => {
      expect(load('https://metadata.example.com').publicUrl).to.equal('https://metadata.example.com');
      expect(load(' http://10.0.0.7:8080/ ').publicUrl).to.equal('http://10.0.0.7:8080');
      expect(load('').publicUrl).to.equal(undefined);
      expect(loadConfig({}).publicUrl).to.equal(undefined);
    });

    it('stops the start, naming itself, for anything else', () => {
      for (const value of ['metadata.example.com', 'ftp://metadata.example.com', 'https://metadata.example.com/mms', 'https://metadata.example.com?x=1', 'https://metadata.example.com/#top', 'https://user:pw@metadata.example.com', 'https://', 'javascript:alert(1)']) {
        expect(() => load(value), value).to.throw(ConfigError, /^SERVICE_PUBLIC_URL: /);
      }
    });
  });

  describe('a service behind it', () => {
    let t: TestService;
    let db: string;
    const PUBLIC = 'https://metadata.example.com/mms';
    const noHostile = (text: string) => expect(text).not.to.match(/evil/);

    before(async () => {
      t = await startService({ SERVICE_PUBLIC_URL: 'https://metadata.example.com', SERVICE_CONTEXT_PATH: '/mms', SERVICE_TRUST_PROXY: 'true', SERVICE_LOGOUT_URL: 'https://idp.example/logout?back=${POST_LOGOUT_REDIRECT_URL}' });
      db = await createDatabase(t);
    });
    after(() => t.close());

    it('writes Location, _links and href from it, never from Host or X-Forwarded-*', async () => {
      const created = await raw(t, 'POST', `/mms/rest/${db}/schemes`, { _type: 'Scheme', label: 'Linked' });
      expect(created.status, created.text).to.equal(201);
      const scheme = JSON.parse(created.text);
      expect(created.headers.location).to.equal(`${PUBLIC}/rest/${db}/schemes/${scheme.id}`);
      expect(scheme._links.self.href).to.equal(`${PUBLIC}/rest/${db}/schemes/${scheme.id}`);
      expect(scheme.href).to.equal(`${PUBLIC}/web/${db}/schemes/${scheme.id}`);
      noHostile(created.text);
      await raw(t, 'POST', `/mms/rest/${db}/schemes`, { _type: 'Scheme', label: 'Second' });
      for (const target of [`/mms/rest/${db}/schemes`, `/mms/rest/${db}/schemes?limit=1`, `/mms/rest/${db}/schemes?version=${Date.now()}`]) {
        const r = await raw(t, 'GET', target);
        expect(r.status, r.text).to.equal(200);
        noHostile(r.text);
        expect(JSON.parse(r.text)._links.self.href).to.equal(`https://metadata.example.com${target}`);
      }
      const asOf = await raw(t, 'GET', `/mms/rest/${db}/schemes/Linked?version=${Date.now()}`);
      expect(JSON.parse(asOf.text)._links.self.href).to.equal(scheme._links.self.href);
      const page = JSON.parse((await raw(t, 'GET', `/mms/rest/${db}/schemes?limit=1`)).text);
      expect(page._links.next.href).to.match(new RegExp(`^${PUBLIC}/rest/${db}/schemes\\?limit=1&cursor=`));
    });

    it('writes an error\'s _links.self from it, also for a request target in absolute form', async () => {
      let r = await raw(t, 'GET', `/mms/rest/${db}/schemes/Nope`);
      expect(JSON.parse(r.text)._links.self).to.equal(`${PUBLIC}/rest/${db}/schemes/Nope`);
      r = await raw(t, 'GET', `http://evil-target.example/mms/rest/${db}/schemes/Nope?x=1`);
      expect(r.status).to.equal(404);
      expect(JSON.parse(r.text)._links.self).to.equal(`${PUBLIC}/rest/${db}/schemes/Nope?x=1`);
      r = await raw(t, 'GET', '/elsewhere');
      expect(JSON.parse(r.text)._links.self).to.equal('https://metadata.example.com/elsewhere');
    });

    it('writes the Location of a new database and the links of the plugins from it', async () => {
      const name = `pub_${Date.now().toString(36)}`;
      const created = await raw(t, 'POST', '/mms/api/admin/databases', { name });
      expect(created.status, created.text).to.equal(201);
      expect(created.headers.location).to.equal(`${PUBLIC}/api/admin/databases/${name}`);
      const absolute = await raw(t, 'POST', `http://evil-target.example/mms/api/admin/databases`, { name: `${name}_2` });
      expect(absolute.headers.location).to.equal(`${PUBLIC}/api/admin/databases/${name}_2`);
      const users = JSON.parse((await raw(t, 'GET', `/mms/rest/${db}/users?loginId=${ADMIN.loginId}`)).text);
      expect(users._links.self.href.startsWith(PUBLIC)).to.equal(true);
      const session = JSON.parse((await raw(t, 'GET', `/mms/api/${db}/session`)).text);
      expect(session.logoutUrl).to.equal(`https://idp.example/logout?back=${encodeURIComponent(`${PUBLIC}/web/${db}`)}`);
    });

    it('names it, with the context path, as the one server of the OpenAPI document', async () => {
      const json = JSON.parse((await raw(t, 'GET', '/mms/specification/openapi.json')).text);
      expect(json.servers).to.deep.equal([{ url: PUBLIC }]);
      const yaml = (await raw(t, 'GET', '/mms/specification/openapi.yaml')).text;
      expect(yaml).to.include(`servers:\n  - url: ${PUBLIC}\n`);
      expect(Object.keys(json.paths).length).to.be.above(50);
    });
  });

  describe('without it', () => {
    it('keeps writing links from Host, and X-Forwarded-* behind a trusted proxy, as before', async () => {
      const t = await startService({ SERVICE_TRUST_PROXY: 'true' });
      try {
        const r = await raw(t, 'GET', '/rest/nowhere/schemes');
        expect(JSON.parse(r.text)._links.self).to.equal('http://evil-forwarded.example/rest/nowhere/schemes');
        expect(JSON.parse((await raw(t, 'GET', '/specification/openapi.json')).text).servers).to.deep.equal([{ url: '/' }]);
      } finally {
        await t.close();
      }
    });
  });
});
