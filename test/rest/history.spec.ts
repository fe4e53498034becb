/**
 * An object's history (`GET /rest/<db>/<list>/<uuid>/history`): its
 * versions newest first, what each changed, paging, and who may read it
 * (the same callers as the object, never another tenant's).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';
import { createTenant, createUser, inTenant, secret, type Credentials } from '../auth/fixtures.ts';

type Json = Record<string, any>;

async function expectStatus(r: Response, status: number): Promise<Json> {
  const text = await r.text();
  expect(r.status, text).to.equal(status);
  return text ? JSON.parse(text) : {};
}

describe('REST interface: an object\'s history', function () {
  // A database, a tenant and four users before the first test: on a busy machine that has taken over a minute.
  this.timeout(180_000);
  let t: TestService;
  let db: string;
  let classifier: Json;
  const call = async (method: string, path: string, status: number, json?: unknown, init: { auth?: Credentials | null; headers?: Record<string, string> } = {}) =>
    expectStatus(await t.request(`/rest/${db}/${path}`, { method, json, ...init }), status);
  const reader = { loginId: 'history-reader', password: secret('history-Reader-1') };
  const editor = { loginId: 'history-editor', password: secret('history-Editor-1') };
  const stranger = { loginId: 'history-stranger', password: secret('history-Stranger-1') };
  const strangerAdmin = { loginId: 'history-stranger-admin', password: secret('history-Stranger-2') };

  // The classifier: created → PATCHed (title) → PUT (description, title gone) → renamed by its label.
  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    await createUser(t, db, { ...reader, accessLevel: 'READ_ONLY' });
    await createUser(t, db, { ...editor, accessLevel: 'EDITOR' });
    await createTenant(t, db, 'Elsewhere');
    await createUser(t, db, { ...stranger, accessLevel: 'READ_ONLY', tenant: 'Elsewhere' });
    await createUser(t, db, { ...strangerAdmin, accessLevel: 'ADMINISTRATOR', tenant: 'Elsewhere' });
    await call('POST', 'schemes', 201, { _type: 'Scheme', label: 'Chronicle' });
    classifier = await call('POST', 'schemes/Chronicle/classifiers', 201, { _type: 'Classifier', label: 'Kunde' }, { auth: editor });
    await call('PATCH', `classifiers/${classifier.id}`, 200, { title: 'Customer title' });
    await call('PUT', `classifiers/${classifier.id}`, 200, { _type: 'Classifier', label: 'Kunde', description: 'who buys' });
    await call('PATCH', 'schemes/Chronicle/classifiers/Kunde', 200, { label: 'Customer' });
  });
  after(() => t.close());

  it('lists every version newest first, with what each changed and the object as it read then', async () => {
    const history = await call('GET', `classifiers/${classifier.id}/history`, 200);
    expect(history.total).to.equal(4);
    expect(history._links.self.href).to.equal(`${t.url}/rest/${db}/classifiers/${classifier.id}/history`);
    const entries: Json[] = history._embedded.history;
    expect(entries.map((e) => [e.version, e.operation])).to.deep.equal([[4, 'update'], [3, 'update'], [2, 'update'], [1, 'create']]);
    expect(entries[3].changes).to.include.members(['label', 'parentId']).and.not.include('_version');
    expect(entries[3].changedBy).to.equal(editor.loginId);
    expect(entries[2].changes).to.deep.equal(['title']);
    expect(entries[1].changes).to.deep.equal(['description', 'title']);
    expect(entries[0].changes).to.deep.equal(['label']);
    expect(entries[0].changedBy).to.equal('admin');
    expect(entries[3].object).to.include({ id: classifier.id, label: 'Kunde', _version: 1, _type: 'Classifier' });
    expect(entries[2].object).to.include({ title: 'Customer title', _version: 2 });
    expect(entries[0].object).to.include({ label: 'Customer', description: 'who buys', _version: 4 });
    expect(entries[0].object._links.self.href).to.equal(`${t.url}/rest/${db}/classifiers/${classifier.id}`);
    // Each version is valid until the next one began; the current one has no end.
    expect(entries[0].validTo).to.equal(null);
    for (let i = 1; i < entries.length; i++) {
      expect(entries[i].validTo).to.equal(entries[i - 1].validFrom);
      expect(entries[i].validFrom).to.be.at.most(entries[i].validTo);
    }
    // The object as it read at a version is what GET …?version= reads.
    const asOf = await call('GET', `classifiers/${classifier.id}?version=${entries[2].validFrom}`, 200);
    expect(entries[2].object).to.deep.equal(asOf);
  });

  it('is reached through a supertype\'s list and by the object\'s current label, as GET reaches the object', async () => {
    const viaAssets = await call('GET', `assets/${classifier.id}/history`, 200);
    expect(viaAssets.total).to.equal(4);
    const byLabel = await call('GET', 'schemes/Chronicle/history', 200);
    expect(byLabel._embedded.history[0].object).to.include({ _type: 'Scheme', label: 'Chronicle' });
  });

  it('records a move to another parent as a change of parentId', async () => {
    const from = await call('POST', 'organizations', 201, { _type: 'Organization', label: 'History From' });
    const to = await call('POST', 'organizations', 201, { _type: 'Organization', label: 'History To' });
    const person = await call('POST', 'organizations/History%20From/persons', 201, { _type: 'Person', givenName: 'Mo', familyName: 'Ved' });
    await call('PATCH', `persons/${person.id}`, 200, { agentOf: to.id });
    const [moved, created] = (await call('GET', `persons/${person.id}/history`, 200))._embedded.history;
    expect(moved.changes).to.include.members(['agentOf', 'parentId']);
    expect(moved.object).to.include({ parentId: to.id });
    expect(created.object).to.include({ parentId: from.id });
  });

  it('pages with limit and cursor, newest first, and refuses a cursor it did not make', async () => {
    const first = await call('GET', `classifiers/${classifier.id}/history?limit=3`, 200);
    expect(first.total).to.equal(4);
    expect(first._embedded.history.map((e: Json) => e.version)).to.deep.equal([4, 3, 2]);
    // The oldest entry of a page still knows what it changed: the page was read one further.
    expect(first._embedded.history[2].changes).to.deep.equal(['title']);
    const next = new URL(first._links.next.href);
    const second = await expectStatus(await t.request(next.pathname + next.search), 200);
    expect(second._embedded.history.map((e: Json) => e.version)).to.deep.equal([1]);
    expect(second._embedded.history[0].operation).to.equal('create');
    expect(second._links.next).to.equal(undefined);
    await call('GET', `classifiers/${classifier.id}/history?limit=0`, 400);
    await call('GET', `classifiers/${classifier.id}/history?cursor=nonsense`, 400);
    const foreign = Buffer.from(JSON.stringify(['2', randomUUID()])).toString('base64url');
    await call('GET', `classifiers/${classifier.id}/history?cursor=${foreign}`, 400);
  });

  it('keeps a deleted object\'s history readable by its technical key, the delete newest', async () => {
    const doomed = await call('POST', 'schemes/Chronicle/classifiers', 201, { _type: 'Classifier', label: 'Doomed' });
    await call('DELETE', `classifiers/${doomed.id}`, 204);
    await call('GET', `classifiers/${doomed.id}`, 404);
    const history = await call('GET', `classifiers/${doomed.id}/history`, 200);
    expect(history._embedded.history.map((e: Json) => [e.version, e.operation])).to.deep.equal([[2, 'delete'], [1, 'create']]);
    expect(history._embedded.history[0]).to.include({ changedBy: 'admin' });
    expect(history._embedded.history[0].changes).to.deep.equal([]);
    // A label names only what exists now.
    await call('GET', 'schemes/Chronicle/classifiers/Doomed/history', 404);
  });

  it('never shows a user\'s password, neither as a value nor as a change', async () => {
    const password = secret('history-Password-1');
    const user = await call('POST', 'users', 201, { _type: 'User', loginId: 'history-user', accessLevel: 'READ_ONLY', password });
    const changed = secret('history-Password-2');
    await call('PATCH', `users/${user.id}`, 200, { password: changed, accessLevel: 'EDITOR' });
    const r = await t.request(`/rest/${db}/users/${user.id}/history`);
    const text = await r.text();
    expect(r.status, text).to.equal(200);
    expect(text).to.not.contain(password).and.not.contain(changed).and.not.contain('"password"');
    const entries = JSON.parse(text)._embedded.history;
    expect(entries[0].changes).to.deep.equal(['accessLevel']);
  });

  it('is readable by a READ_ONLY caller of the tenant, and users\' only by administrators, as the objects are', async () => {
    expect((await call('GET', `classifiers/${classifier.id}/history`, 200, undefined, { auth: reader })).total).to.equal(4);
    const user = (await call('GET', `users?loginId=${editor.loginId}`, 200))._embedded.users[0];
    await call('GET', `users/${user.id}`, 403, undefined, { auth: reader });
    await call('GET', `users/${user.id}/history`, 403, undefined, { auth: reader });
    await call('GET', `users/${randomUUID()}/history`, 403, undefined, { auth: reader });
  });

  it('answers another tenant\'s caller 404, as if the object did not exist, and a caller without credentials 401', async () => {
    for (const caller of [stranger, strangerAdmin]) {
      const missing = await call('GET', `classifiers/${classifier.id}/history`, 404, undefined, { auth: caller });
      expect(missing.message).to.not.contain('Kunde');
      await call('GET', `classifiers/${classifier.id}`, 404, undefined, { auth: caller });
    }
    // Not even the system administrator, signed in to the other tenant, sees the first tenant's objects there.
    await call('GET', `classifiers/${classifier.id}/history`, 404, undefined, { headers: inTenant('Elsewhere') });
    await call('GET', `classifiers/${classifier.id}/history`, 401, undefined, { auth: null });
  });

  it('answers 404 for a list the object is not of, a key that names nothing, or a malformed key, as GET does', async () => {
    await call('GET', `schemes/${classifier.id}`, 404);
    await call('GET', `schemes/${classifier.id}/history`, 404);
    await call('GET', `attributes/${classifier.id}/history`, 404);
    await call('GET', `classifiers/${randomUUID()}/history`, 404);
    await call('GET', 'classifiers/not-a-uuid/history', 404);
    await call('GET', 'classifiers/not-a-uuid', 404);
    await call('GET', `nosuchlist/${classifier.id}/history`, 404);
  });

  it('only reads: other methods are 405 with the methods it has; an as-of read of history is refused', async () => {
    const r = await t.request(`/rest/${db}/classifiers/${classifier.id}/history`, { method: 'DELETE' });
    expect(r.status).to.equal(405);
    expect(r.headers.get('allow')).to.equal('GET, HEAD');
    await call('GET', `classifiers/${classifier.id}/history?version=1`, 400);
    expect((await t.request(`/rest/${db}/classifiers/${classifier.id}/history`, { method: 'HEAD' })).status).to.equal(200);
  });

  it('answers in the caller\'s language', async () => {
    const missing = await call('GET', `classifiers/${randomUUID()}/history`, 404, undefined, { headers: { 'Accept-Language': 'de' } });
    const english = await call('GET', `classifiers/${randomUUID()}/history`, 404);
    expect(missing.message).to.not.equal(english.message);
  });
});
