import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';

type Json = Record<string, any>;

async function expectStatus(r: Response, status: number): Promise<Json> {
  const text = await r.text();
  expect(r.status, text).to.equal(status);
  return text ? JSON.parse(text) : {};
}

/** Waits until the database clock has passed a time, so that the next change has a later timestamp. */
async function waitPast(ms: number) {
  const wait = ms + 5 - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

describe('REST interface: reading as of a time', () => {
  let t: TestService;
  let db: string;
  let scheme: Json;
  let classifier: Json;
  const times: Record<string, number> = {};
  const call = async (method: string, path: string, status: number, json?: unknown, headers: Record<string, string> = {}) =>
    expectStatus(await t.request(`/rest/${db}/${path}`, { method, json, headers }), status);

  // History: created → renamed from "Kunde" to "Customer" → deleted.
  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    scheme = await call('POST', 'schemes', 201, { _type: 'Scheme', label: 'History' });
    classifier = await call('POST', 'schemes/History/classifiers', 201, { _type: 'Classifier', label: 'Kunde', title: 'first' });
    times.created = classifier.dateModified;
    await waitPast(times.created);
    const renamed = await call('PATCH', `classifiers/${classifier.id}`, 200, { label: 'Customer', title: 'second' });
    times.renamed = renamed.dateModified;
    await waitPast(times.renamed);
    await call('DELETE', 'schemes/History/classifiers/Customer', 204);
    times.deleted = Date.now();
    await waitPast(times.deleted);
  });
  after(() => t.close());

  it('reads an object as it was before a rename, by its old business key and its technical key', async () => {
    const at = String(times.renamed - 1);
    const old = await call('GET', `schemes/History/classifiers/Kunde?version=${at}`, 200);
    expect(old).to.include({ id: classifier.id, label: 'Kunde', title: 'first', _version: 1 });
    expect(old._links.self.href).to.equal(`${t.url}/rest/${db}/classifiers/${classifier.id}`);
    expect(await call('GET', `classifiers/${classifier.id}`, 200, undefined, { 'Accept-Version': at })).to.include({ label: 'Kunde' });
  });

  it('reads the renamed object between the rename and the delete, and not under its old label', async () => {
    const at = String(times.renamed);
    expect(await call('GET', `classifiers/${classifier.id}?version=${at}`, 200)).to.include({ label: 'Customer', _version: 2 });
    await call('GET', `schemes/History/classifiers/Kunde?version=${at}`, 404);
  });

  it('reads a list as of a time before the rename and after the delete', async () => {
    const before = await call('GET', `schemes/History/classifiers?version=${times.renamed - 1}`, 200);
    expect(before.total).to.equal(1);
    expect(before._embedded.classifiers[0]).to.include({ id: classifier.id, label: 'Kunde' });
    expect(before._links.self.href).to.equal(`${t.url}/rest/${db}/schemes/History/classifiers?version=${times.renamed - 1}`);
    const afterDelete = await call('GET', 'schemes/History/classifiers', 200, undefined, { 'Accept-Version': String(times.deleted) });
    expect(afterDelete).to.include({ total: 0 });
    expect(afterDelete._embedded.classifiers).to.deep.equal([]);
  });

  it('does not find the deleted object after the delete, nor anything before the creation', async () => {
    await call('GET', `classifiers/${classifier.id}?version=${times.deleted}`, 404);
    await call('GET', `classifiers/${classifier.id}?version=${times.created - 1}`, 404);
    await call('GET', `classifiers/${classifier.id}`, 404);
  });

  it('prefers the query parameter to the Accept-Version header', async () => {
    const o = await call('GET', `classifiers/${classifier.id}?version=${times.renamed - 1}`, 200, undefined, { 'Accept-Version': String(times.deleted) });
    expect(o.label).to.equal('Kunde');
    await call('GET', `classifiers/${classifier.id}?version=${times.deleted}`, 404, undefined, { 'Accept-Version': String(times.renamed - 1) });
  });

  it('reads the list of all objects of a type and an object through a supertype as of a time', async () => {
    const list = await call('GET', `classifiers?version=${times.renamed - 1}`, 200);
    expect(list._embedded.classifiers.map((o: Json) => o.id)).to.deep.equal([classifier.id]);
    expect((await call('GET', `assets/${classifier.id}?version=${times.renamed - 1}`, 200)).label).to.equal('Kunde');
  });

  it('refuses a version that is not a number of milliseconds (400)', async () => {
    for (const bad of ['yesterday', '-1', '1.5', '1e3', '99999999999999999999']) {
      const body = await call('GET', `schemes/History?version=${encodeURIComponent(bad)}`, 400);
      expect(body.message, bad).to.equal('The parameter version is invalid.');
    }
    await call('GET', 'schemes/History', 400, undefined, { 'Accept-Version': 'now' });
  });
});
