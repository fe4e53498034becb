import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Context } from 'koa';
import { ADMIN, createDatabase, logLines, startService, type TestService } from '../helpers/service.ts';
import { schemaOf } from '../../runtime/storage/migrations.ts';
import { AccessKeyDriver } from '../../plugins/access/driver.ts';
import { AccessKeyStore } from '../../plugins/access/keys.ts';
import type { ServiceError } from '../../runtime/errors.ts';
import { createTenant, createUser, expectNoSecretInLog, inTenant, secret, type Credentials } from './fixtures.ts';

const KEY_FORM = /^mdsk_[A-Za-z0-9_-]{43}$/;

describe('access keys', () => {
  let t: TestService;
  let db: string;
  let defaultTenant: string;
  let secondTenant: string;
  const keys: string[] = [];
  const people: Record<string, { c: Credentials; id: string }> = {};

  const withKey = (key: string, headers: Record<string, string> = {}) => ({ auth: null, headers: { ...headers, 'service-access-key': key } });

  async function person(loginId: string, accessLevel: 'READ_ONLY' | 'EDITOR' | 'ADMINISTRATOR', tenant?: string) {
    const c = { loginId, password: secret(`${loginId}-Passwort-9`) };
    const user = await createUser(t, db, { ...c, accessLevel, tenant });
    people[loginId] = { c, id: user.id as string };
    return people[loginId];
  }

  async function newKey(userId: string, body: Record<string, unknown> = {}, as: Credentials = ADMIN, headers: Record<string, string> = {}) {
    const r = await t.request(`/rest/${db}/users/${userId}/accessKeys`, { method: 'POST', json: body, auth: as, headers });
    expect(r.status, await r.clone().text()).to.equal(201);
    const created = await r.json();
    keys.push(created.key);
    return { created, response: r };
  }

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    secondTenant = (await createTenant(t, db, 'Second')).id as string;
    defaultTenant = (await t.service.databases.get(db))!.defaultTenant;
    await person('boss', 'ADMINISTRATOR');
    await person('editor', 'EDITOR');
    await person('reader', 'READ_ONLY');
    await person('other-boss', 'ADMINISTRATOR', 'Second');
    await person('other-editor', 'EDITOR', 'Second');
  });
  after(async () => t?.close());

  describe('creation', () => {
    it('answers 201 with the key once, and keeps only its SHA-256', async () => {
      const { created, response } = await newKey(people.editor.id, { description: 'nightly export' });
      expect(Object.keys(created)).to.include.members(['id', 'key', 'tenant', 'expiresAt']);
      expect(created.key).to.match(KEY_FORM);
      expect(created).to.include({ tenant: defaultTenant, expiresAt: null, description: 'nightly export', userId: people.editor.id, createdBy: ADMIN.loginId });
      expect(response.headers.get('location')).to.match(new RegExp(`/rest/${db}/accessKeys/${created.id}$`));
      expect(response.headers.get('cache-control')).to.equal('no-store');
      const rows = (await t.service.storage.knex.raw(`select * from "${schemaOf(db)}".access_keys where id = ?`, [created.id])).rows;
      expect(rows).to.have.length(1);
      expect(rows[0].hash).to.equal(createHash('sha256').update(created.key).digest('hex'));
      expect(JSON.stringify(rows[0])).to.not.include(created.key.slice(5));
    });

    it('makes a different key every time', async () => {
      const a = (await newKey(people.reader.id)).created;
      const b = (await newKey(people.reader.id)).created;
      expect(a.key).to.not.equal(b.key);
      expect(a.id).to.not.equal(b.id);
    });

    it('takes an expiry in epoch milliseconds and the user by label in the login tenant', async () => {
      const expiresAt = Date.now() + 3_600_000;
      const { created } = await newKey('reader', { expiresAt });
      expect(created).to.include({ expiresAt, userId: people.reader.id });
    });

    const invalid: [string, unknown, string, string][] = [
      ['an expiry in the past', { expiresAt: Date.now() - 1000 }, 'expiresAt', 'The time must lie in the future.'],
      ['an expiry that is not a number', { expiresAt: 'tomorrow' }, 'expiresAt', 'The value must be a whole number.'],
      ['an expiry with a fraction', { expiresAt: Date.now() + 10_000.5 }, 'expiresAt', 'The value must be a whole number.'],
      ['an expiry beyond any date', { expiresAt: 9e15 }, 'expiresAt', 'The value is invalid.'],
      ['a description of 1001 characters', { description: 'x'.repeat(1001) }, 'description', 'The value is too long: at most 1000 characters.'],
      ['a description that is not text', { description: 42 }, 'description', 'The value must be text.'],
      ['an unknown property', { key: 'mdsk_chosen' }, 'key', 'The property is unknown.'],
    ];
    for (const [what, body, path, message] of invalid) {
      it(`answers 400 with a violation to ${what}, and makes no key`, async () => {
        const before = (await (await t.request(`/rest/${db}/users/${people.boss.id}/accessKeys`)).json()).total;
        const r = await t.request(`/rest/${db}/users/${people.boss.id}/accessKeys`, { method: 'POST', json: body });
        expect(r.status).to.equal(400);
        const error = await r.json();
        expect(error).to.include({ statusCode: 400, method: 'POST' });
        expect(error.violations).to.deep.equal([{ path, message }]);
        expect((await (await t.request(`/rest/${db}/users/${people.boss.id}/accessKeys`)).json()).total).to.equal(before);
      });
    }

    it('answers 400, never 500, to a description the database cannot store (NUL), and makes no key', async () => {
      const before = (await (await t.request(`/rest/${db}/users/${people.boss.id}/accessKeys`)).json()).total;
      const r = await t.request(`/rest/${db}/users/${people.boss.id}/accessKeys`, { method: 'POST', json: { description: 'nightly\u0000' } });
      expect(r.status).to.equal(400);
      expect((await (await t.request(`/rest/${db}/users/${people.boss.id}/accessKeys`)).json()).total).to.equal(before);
    });

    it('answers 400 to a body that is not an object, 404 to an unknown user, 405 to other methods', async () => {
      expect((await t.request(`/rest/${db}/users/${people.boss.id}/accessKeys`, { method: 'POST', json: [1] })).status).to.equal(400);
      const unknown = await t.request(`/rest/${db}/users/${randomUUID()}/accessKeys`, { method: 'POST', json: {} });
      expect(unknown.status).to.equal(404);
      expect((await t.request(`/rest/${db}/users/nobody/accessKeys`, { method: 'POST', json: {} })).status).to.equal(404);
      const put = await t.request(`/rest/${db}/users/${people.boss.id}/accessKeys`, { method: 'PUT', json: {} });
      expect(put.status).to.equal(405);
      expect(put.headers.get('allow')).to.equal('GET, HEAD, POST');
    });

    it('makes no key for an object that is not a user', async () => {
      expect((await t.request(`/rest/${db}/users/${defaultTenant}/accessKeys`, { method: 'POST', json: {} })).status).to.equal(404);
    });
  });

  describe('signing in with a key', () => {
    let editorKey: string;
    let readerKey: string;
    before(async () => {
      editorKey = (await newKey(people.editor.id)).created.key;
      readerKey = (await newKey(people.reader.id)).created.key;
    });

    it('identifies the user and the tenant without credentials', async () => {
      const r = await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'By key' }, ...withKey(editorKey) });
      expect(r.status).to.equal(201);
      expect(await r.json()).to.include({ createdBy: 'editor', tenant: defaultTenant });
    });

    it('applies the user\'s access level, and a change of it from the next request', async () => {
      expect((await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Reader' }, ...withKey(readerKey) })).status).to.equal(403);
      expect((await t.request(`/rest/${db}/schemes`, withKey(readerKey))).status).to.equal(200);
      expect((await t.request(`/rest/${db}/users/${people.reader.id}`, { method: 'PATCH', json: { accessLevel: 'EDITOR' } })).status).to.equal(200);
      expect((await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Reader' }, ...withKey(readerKey) })).status).to.equal(201);
      expect((await t.request(`/rest/${db}/users/${people.reader.id}`, { method: 'PATCH', json: { accessLevel: 'READ_ONLY' } })).status).to.equal(200);
      expect((await t.request(`/rest/${db}/schemes/Reader`, { method: 'DELETE', ...withKey(readerKey) })).status).to.equal(403);
    });

    it('replaces the credential login: the key decides, whatever the Authorization header says', async () => {
      const r = await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Key wins' }, auth: { loginId: 'editor', password: 'wrong-Passwort' }, headers: { 'service-access-key': editorKey } });
      expect(r.status).to.equal(201);
      const bad = await t.request(`/rest/${db}/schemes`, { auth: ADMIN, headers: { 'service-access-key': `mdsk_${randomBytes(32).toString('base64url')}` } });
      expect(bad.status).to.equal(401);
    });

    it('accepts service-tenant naming the key\'s own tenant, and refuses (403) any other, existing or not', async () => {
      expect((await t.request(`/rest/${db}/schemes`, withKey(editorKey, inTenant('Default')))).status).to.equal(200);
      const other = await t.request(`/rest/${db}/schemes`, withKey(editorKey, inTenant('Second')));
      expect(other.status).to.equal(403);
      expect((await t.request(`/rest/${db}/schemes`, withKey(editorKey, inTenant('No such tenant')))).status).to.equal(403);
      // The other tenant's data stays out of reach: a key of Second with service-tenant Default, the same.
      const otherKey = (await newKey(people['other-editor'].id)).created.key;
      expect((await t.request(`/rest/${db}/schemes`, withKey(otherKey, inTenant('Default')))).status).to.equal(403);
      const own = await (await t.request(`/rest/${db}/schemes`, withKey(otherKey))).json();
      expect(own.total).to.equal(0);
    });

    it('serves the programming interfaces below /api/<db> too, but not service-wide calls or other addresses', async () => {
      expect((await t.request(`/api/${db}/no-such-route`, withKey(editorKey))).status).to.equal(404);
      expect((await t.request(`/api/${db}/no-such-route`, withKey(`mdsk_${randomBytes(32).toString('base64url')}`))).status).to.equal(401);
      expect((await t.request('/api/admin/databases', withKey(editorKey))).status).to.equal(401);
    });

    it('is refused for the user interface (/web/…) by the driver itself', async () => {
      const driver = new AccessKeyDriver({ keys: new AccessKeyStore(t.service.storage.knex), isSystemAdmin: () => false, log: { warn() {} } });
      const ctx = (path: string) => ({ path, get: (name: string) => (name === 'service-access-key' ? editorKey : '') }) as unknown as Context;
      const info = { name: db, defaultTenant };
      const result = await driver.authenticate({ ctx: ctx(`/rest/${db}/schemes`), db: info });
      expect(result).to.deep.include({ kind: 'principal' });
      for (const path of [`/web/${db}/schemes`, '/web/admin', `/rest`, '/specification/openapi.json']) {
        let error: ServiceError | undefined;
        await driver.authenticate({ ctx: ctx(path), db: info }).catch((err) => { error = err; });
        expect(error?.status, path).to.equal(401);
      }
    });

    it('records the last use, at most once a minute', async () => {
      const { created } = await newKey(people.editor.id);
      const lastUsed = async () => (await (await t.request(`/rest/${db}/accessKeys/${created.id}`)).json()).lastUsed;
      expect(await lastUsed()).to.equal(null);
      const before = Date.now();
      await t.request(`/rest/${db}/schemes`, withKey(created.key));
      const first = await lastUsed();
      expect(first).to.be.a('number').within(before - 1000, Date.now() + 1000);
      await new Promise((r) => setTimeout(r, 20));
      await t.request(`/rest/${db}/schemes`, withKey(created.key));
      expect(await lastUsed()).to.equal(first);
    });
  });

  describe('rejections: one answer for every key that does not sign in', () => {
    let reference: { status: number; body: unknown; challenge: string | null };
    const answer = async (key: string) => {
      const r = await t.request(`/rest/${db}/schemes`, withKey(key));
      return { status: r.status, body: await r.json(), challenge: r.headers.get('www-authenticate') };
    };
    const randomKey = () => `mdsk_${randomBytes(32).toString('base64url')}`;

    before(async () => {
      reference = await answer(randomKey());
    });

    it('answers a guessed key 401 with the challenges of the enabled methods and nothing more', async () => {
      expect(reference.status).to.equal(401);
      expect(reference.challenge).to.match(/^Basic /);
      expect(reference.body).to.deep.equal({ statusCode: 401, method: 'GET', message: 'The credentials were not accepted.', _links: { self: `${t.url}/rest/${db}/schemes` } });
      for (let i = 0; i < 20; i++) expect(await answer(randomKey())).to.deep.equal(reference);
    });

    it('answers keys of the wrong form alike', async () => {
      for (const key of ['x', 'mdsk_', `mdsk_${'A'.repeat(42)}`, `mdsk_${'A'.repeat(44)}`, randomKey().replace('mdsk_', 'mdsx_'), `${randomKey()} `, `Bearer ${randomKey()}`]) {
        expect(await answer(key), key).to.deep.equal(reference);
      }
    });

    it('answers a revoked key alike, from the very next request', async () => {
      const { created } = await newKey(people.editor.id);
      expect((await answer(created.key)).status).to.equal(200);
      const revoked = await t.request(`/rest/${db}/accessKeys/${created.id}`, { method: 'DELETE' });
      expect(revoked.status).to.equal(204);
      expect(await answer(created.key)).to.deep.equal(reference);
      expect((await t.request(`/rest/${db}/accessKeys/${created.id}`, { method: 'DELETE' })).status).to.equal(404);
    });

    it('answers an expired key alike', async () => {
      const { created } = await newKey(people.editor.id, { expiresAt: Date.now() + 1500 });
      expect((await answer(created.key)).status).to.equal(200);
      await new Promise((r) => setTimeout(r, 1600));
      expect(await answer(created.key)).to.deep.equal(reference);
      const listed = (await (await t.request(`/rest/${db}/users/${people.editor.id}/accessKeys`)).json())._embedded.accessKeys;
      expect(listed.find((k: { id: string }) => k.id === created.id)).to.include({ expired: true });
    });

    it('answers the key of a removed user alike, and removes the user\'s keys with it', async () => {
      const gone = await person('leaver', 'EDITOR');
      const { created } = await newKey(gone.id);
      expect((await answer(created.key)).status).to.equal(200);
      expect((await t.request(`/rest/${db}/users/${gone.id}`, { method: 'DELETE' })).status).to.equal(204);
      expect(await answer(created.key)).to.deep.equal(reference);
      const rows = (await t.service.storage.knex.raw(`select 1 from "${schemaOf(db)}".access_keys where user_id = ?`, [gone.id])).rows;
      expect(rows).to.have.length(0);
    });

    it('answers a key of another database alike', async () => {
      const otherDb = await createDatabase(t);
      const user = await createUser(t, otherDb, { loginId: 'elsewhere', accessLevel: 'EDITOR' });
      const r = await t.request(`/rest/${otherDb}/users/${user.id}/accessKeys`, { method: 'POST', json: {} });
      const { key } = await r.json();
      keys.push(key);
      expect((await t.request(`/rest/${otherDb}/schemes`, withKey(key))).status).to.equal(200);
      expect(await answer(key)).to.deep.equal(reference);
    });

    it('answers a database that does not exist as it answers a bad key', async () => {
      const { created } = await newKey(people.editor.id);
      const r = await t.request('/rest/no_such_db/schemes', withKey(created.key));
      expect(r.status).to.equal(401);
    });
  });

  describe('more than one instance', () => {
    it('sees a revocation and a change of the user made on another instance within SERVICE_ACCESS_KEY_CACHE_TTL', async function () {
      // Two instances share a database only on PostgreSQL.
      if (!process.env.SERVICE_TEST_DATABASE_URL) this.skip();
      const other = await startService({ SERVICE_ACCESS_KEY_CACHE_TTL: '800' });
      const uncached = await startService({ SERVICE_ACCESS_KEY_CACHE_TTL: '0' });
      try {
        const { created } = await newKey(people.editor.id);
        const get = (s: TestService) => s.request(`/rest/${db}/schemes`, withKey(created.key));
        const post = (s: TestService) => s.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: `M ${randomUUID()}` }, ...withKey(created.key) });
        expect((await post(other)).status).to.equal(201);
        expect((await post(uncached)).status).to.equal(201);
        expect((await t.request(`/rest/${db}/users/${people.editor.id}`, { method: 'PATCH', json: { accessLevel: 'READ_ONLY' } })).status).to.equal(200);
        expect((await post(uncached)).status).to.equal(403);
        await new Promise((r) => setTimeout(r, 900));
        expect((await post(other)).status).to.equal(403);
        expect((await t.request(`/rest/${db}/users/${people.editor.id}`, { method: 'PATCH', json: { accessLevel: 'EDITOR' } })).status).to.equal(200);
        expect((await get(other)).status).to.equal(200);
        expect((await t.request(`/rest/${db}/accessKeys/${created.id}`, { method: 'DELETE' })).status).to.equal(204);
        expect((await get(uncached)).status).to.equal(401);
        await new Promise((r) => setTimeout(r, 900));
        expect((await get(other)).status).to.equal(401);
      } finally {
        await other.close();
        await uncached.close();
      }
    });
  });

  describe('who may manage keys', () => {
    let bossKey: { id: string; key: string };
    let otherKey: { id: string; key: string };
    before(async () => {
      bossKey = (await newKey(people.boss.id)).created;
      otherKey = (await newKey(people['other-editor'].id)).created;
    });

    it('lets an administrator of the tenant create, list, read and revoke the keys of its users', async () => {
      const boss = people.boss.c;
      const r = await t.request(`/rest/${db}/users/${people.reader.id}/accessKeys`, { method: 'POST', json: { description: 'by boss' }, auth: boss });
      expect(r.status).to.equal(201);
      const created = await r.json();
      keys.push(created.key);
      expect(created.createdBy).to.equal('boss');
      const list = await (await t.request(`/rest/${db}/users/${people.reader.id}/accessKeys`, { auth: boss })).json();
      const item = list._embedded.accessKeys.find((k: { id: string }) => k.id === created.id);
      expect(Object.keys(item).sort()).to.deep.equal(['_links', 'createdBy', 'dateCreated', 'description', 'expired', 'expiresAt', 'id', 'lastUsed', 'tenant', 'userId']);
      expect((await t.request(`/rest/${db}/accessKeys/${created.id}`, { auth: boss })).status).to.equal(200);
      expect((await t.request(`/rest/${db}/accessKeys/${created.id}`, { method: 'DELETE', auth: boss })).status).to.equal(204);
    });

    it('lets an access key of an administrator manage keys as its user', async () => {
      const r = await t.request(`/rest/${db}/users/${people.reader.id}/accessKeys`, { method: 'POST', json: {}, ...withKey(bossKey.key) });
      expect(r.status).to.equal(201);
      const created = await r.json();
      keys.push(created.key);
      expect(created.createdBy).to.equal('boss');
    });

    for (const level of ['reader', 'editor'] as const) {
      it(`refuses (403) ${level === 'reader' ? 'a READ_ONLY' : 'an EDITOR'} user every key call, for others and for itself, known or not`, async () => {
        const c = people[level].c;
        const paths: [string, string, unknown?][] = [
          ['POST', `/rest/${db}/users/${people.boss.id}/accessKeys`, {}],
          ['POST', `/rest/${db}/users/${people[level].id}/accessKeys`, {}],
          ['POST', `/rest/${db}/users/${randomUUID()}/accessKeys`, {}],
          ['GET', `/rest/${db}/users/${people.boss.id}/accessKeys`],
          ['GET', `/rest/${db}/users/${people[level].id}/accessKeys`],
          ['GET', `/rest/${db}/accessKeys/${bossKey.id}`],
          ['DELETE', `/rest/${db}/accessKeys/${bossKey.id}`],
          ['DELETE', `/rest/${db}/accessKeys/${randomUUID()}`],
        ];
        for (const [method, path, json] of paths) {
          const r = await t.request(path, { method, json, auth: c });
          expect(r.status, `${method} ${path}`).to.equal(403);
          expect(JSON.stringify(await r.json())).to.not.match(/mdsk_/);
        }
        const viaKey = (await newKey(people[level].id)).created.key;
        expect((await t.request(`/rest/${db}/users/${people[level].id}/accessKeys`, { method: 'POST', json: {}, ...withKey(viaKey) })).status).to.equal(403);
        expect((await t.request(`/rest/${db}/accessKeys/${bossKey.id}`, { method: 'DELETE', ...withKey(viaKey) })).status).to.equal(403);
        // Nothing was revoked by the refused calls.
        expect((await t.request(`/rest/${db}/schemes`, withKey(bossKey.key))).status).to.equal(200);
      });
    }

    it('answers 404 to an administrator of another tenant, for users and keys of this one', async () => {
      const c = people['other-boss'].c;
      expect((await t.request(`/rest/${db}/users/${people.editor.id}/accessKeys`, { method: 'POST', json: {}, auth: c })).status).to.equal(404);
      expect((await t.request(`/rest/${db}/users/${people.editor.id}/accessKeys`, { auth: c })).status).to.equal(404);
      expect((await t.request(`/rest/${db}/accessKeys/${bossKey.id}`, { auth: c })).status).to.equal(404);
      expect((await t.request(`/rest/${db}/accessKeys/${bossKey.id}`, { method: 'DELETE', auth: c })).status).to.equal(404);
      // Naming the other tenant does not help: the administrator has no user there.
      expect((await t.request(`/rest/${db}/accessKeys/${bossKey.id}`, { method: 'DELETE', auth: c, headers: inTenant('Default') })).status).to.equal(403);
      expect((await t.request(`/rest/${db}/schemes`, withKey(bossKey.key))).status).to.equal(200);
      // Its own tenant's keys it manages.
      expect((await t.request(`/rest/${db}/accessKeys/${otherKey.id}`, { auth: c })).status).to.equal(200);
    });

    it('lets a system administrator manage keys of users in any tenant', async () => {
      const r = await t.request(`/rest/${db}/users/${people['other-editor'].id}/accessKeys`, { method: 'POST', json: {} });
      expect(r.status).to.equal(201);
      const created = await r.json();
      keys.push(created.key);
      expect(created.tenant).to.equal(secondTenant);
      expect((await t.request(`/rest/${db}/accessKeys/${created.id}`, { method: 'DELETE' })).status).to.equal(204);
    });

    it('refuses (403) a tenant administrator a key for a system administrator\'s login ID', async () => {
      const admin = await createUser(t, db, { loginId: ADMIN.loginId, accessLevel: 'READ_ONLY', tenant: 'Second' });
      const r = await t.request(`/rest/${db}/users/${admin.id}/accessKeys`, { method: 'POST', json: {}, auth: people['other-boss'].c });
      expect(r.status).to.equal(403);
    });

    it('gives a system administrator\'s key made by a system administrator those rights, in the key\'s tenant only', async () => {
      const admin = await createUser(t, db, { loginId: ADMIN.loginId, accessLevel: 'READ_ONLY' });
      const { created } = await newKey(admin.id as string);
      const tenant = await t.request(`/rest/${db}/tenants`, { method: 'POST', json: { _type: 'Tenant', label: 'Made by key' }, ...withKey(created.key) });
      expect(tenant.status).to.equal(201);
      expect((await t.request(`/rest/${db}/schemes`, withKey(created.key, inTenant('Second')))).status).to.equal(403);
      const scheme = await t.request(`/rest/${db}/schemes`, { method: 'POST', json: { _type: 'Scheme', label: 'Admin key' }, ...withKey(created.key) });
      expect((await scheme.json()).tenant).to.equal(defaultTenant);
    });
  });

  describe('secrets', () => {
    it('shows no key and no digest in any listing, view or history', async () => {
      const knex = t.service.storage.knex;
      const hashes = keys.map((k) => createHash('sha256').update(k).digest('hex'));
      const views = (await knex.raw(`select viewname, definition from pg_views where schemaname = ?`, [schemaOf(db)])).rows;
      expect(views.length).to.be.greaterThan(10);
      for (const v of views) expect(v.definition, v.viewname).to.not.match(/access_keys|access_rules|credentials/);
      const seen: string[] = [];
      for (const v of views) seen.push(JSON.stringify((await knex.raw(`select * from "${schemaOf(db)}"."${v.viewname}"`)).rows));
      seen.push(JSON.stringify((await knex.raw(`select * from "${schemaOf(db)}".history`)).rows));
      seen.push(JSON.stringify((await knex.raw(`select * from "${schemaOf(db)}".objects`)).rows));
      for (const user of Object.values(people)) seen.push(await (await t.request(`/rest/${db}/users/${user.id}/accessKeys`)).text());
      for (const text of seen) {
        for (const secret of [...keys, ...hashes]) expect(text).to.not.include(secret.slice(-20));
      }
    });

    it('writes no key to the log', () => {
      expect(keys.length).to.be.greaterThan(10);
      for (const key of keys) {
        const line = logLines.find((l) => l.includes(key.slice(5, 30)));
        expect(line, 'a log line holds a key').to.equal(undefined);
      }
      expectNoSecretInLog(Object.values(people).map((p) => p.c));
    });
  });
});
