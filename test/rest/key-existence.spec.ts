/**
 * No existence oracle across tenants (issue 16): a write that names another
 * tenant's technical key, or one another tenant had, answers as if the key
 * named nothing the caller may know of.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';
import { createUser, secret, type Credentials } from '../auth/fixtures.ts';

type Json = Record<string, any>;

describe('REST interface: technical keys of other tenants', () => {
  let t: TestService;
  let db: string;
  const eve: Credentials = { loginId: 'eve', password: secret('eve-edits-1') };
  const second = { 'service-tenant': 'Second' };
  let theirs: Json;
  let theirGone: string;
  let mine: Json;

  async function call(method: string, path: string, status: number, json?: unknown, as?: Credentials, headers: Record<string, string> = {}): Promise<Json> {
    const r = await t.request(`/rest/${db}/${path}`, { method, json, headers, ...(as ? { auth: as } : {}) });
    const text = await r.text();
    expect(r.status, `${method} ${path}: ${text}`).to.equal(status);
    return text ? JSON.parse(text) : {};
  }
  const without = (body: Json) => ({ ...body, _links: undefined });

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    await call('POST', 'tenants', 201, { _type: 'Tenant', label: 'Second' });
    theirs = await call('POST', 'schemes', 201, { _type: 'Scheme', label: 'Theirs' }, undefined, second);
    const gone = await call('POST', 'schemes', 201, { _type: 'Scheme', label: 'Gone' }, undefined, second);
    await call('DELETE', `schemes/${gone.id}`, 204, undefined, undefined, second);
    theirGone = gone.id;
    await createUser(t, db, { ...eve, accessLevel: 'EDITOR' });
    mine = await call('POST', 'schemes', 201, { _type: 'Scheme', label: 'Mine' }, eve);
  });
  after(() => t.close());

  it('answers PUT and PATCH on another tenant\'s key, or one it had, with the 404 of a key that names nothing', async () => {
    const unknown = await call('GET', `schemes/${theirs.id}`, 404, undefined, eve);
    for (const method of ['PUT', 'PATCH']) {
      for (const [path, key] of [[`schemes/${theirs.id}`, theirs.id], [`assets/${theirs.id}`, theirs.id], [`schemes/${theirGone}`, theirGone], [`schemes/${theirs.id.toUpperCase()}`, theirs.id.toUpperCase()]]) {
        const body = await call(method, path, 404, { _type: 'Scheme', label: 'Taken Over' }, eve);
        expect(body.message).to.equal(`The ${path.startsWith('assets') ? 'Asset' : 'Scheme'} ${key} was not found.`);
        expect(body).not.to.have.property('violations');
      }
    }
    expect(without(await call('PUT', `schemes/${theirs.id}`, 404, { _type: 'Scheme' }, eve))).to.deep.equal({ ...without(unknown), method: 'PUT' });
    // A key no tenant ever had is still created where it is named.
    expect((await call('PUT', `schemes/${randomUUID()}`, 201, { _type: 'Scheme', label: 'Fresh' }, eve)).label).to.equal('Fresh');
  });

  it('refuses such a key in a payload without saying that it is taken', async () => {
    for (const id of [theirs.id, theirGone]) {
      let body = await call('POST', 'schemes', 400, { _type: 'Scheme', label: 'Claim', id }, eve);
      expect(body.violations).to.deep.equal([{ path: 'id', message: 'The technical key cannot be given to a new object; leave id out to have one assigned.' }]);
      body = await call('PATCH', 'schemes', 400, [{ _type: 'Scheme', label: 'Claim', id }], eve);
      expect(body.violations.map((v: Json) => v.path)).to.deep.equal(['0.id']);
      expect(JSON.stringify(body)).not.to.match(/taken/i);
    }
    const de = await t.request(`/rest/${db}/schemes`, { method: 'POST', auth: eve, headers: { 'accept-language': 'de' }, json: { _type: 'Scheme', label: 'Claim', id: theirs.id } });
    expect((await de.json()).violations[0].message).to.equal('Der technische Schlüssel kann keinem neuen Objekt gegeben werden; lassen Sie id weg, damit einer vergeben wird.');
  });

  it('changes nothing of the other tenant', async () => {
    const read = await call('GET', `schemes/${theirs.id}`, 200, undefined, undefined, second);
    expect(read).to.include({ label: 'Theirs', _version: 1 });
    await call('GET', `schemes/${theirGone}`, 404, undefined, undefined, second);
  });

  it('still says "taken" for a key of the caller\'s own tenant, and to a system administrator for any tenant\'s', async () => {
    let body = await call('POST', 'schemes', 409, { _type: 'Scheme', label: 'Twin', id: mine.id }, eve);
    expect(body.violations).to.deep.equal([{ path: 'id', message: 'The technical key is already taken.' }]);
    body = await call('POST', 'schemes', 409, { _type: 'Scheme', label: 'Twin', id: theirs.id });
    expect(body.violations).to.deep.equal([{ path: 'id', message: 'The technical key is already taken.' }]);
    await call('PUT', `schemes/Mine/classifiers/${theirs.id}`, 409, { _type: 'Classifier', label: 'X' });
  });

  it('lets the caller re-create its own removed object under its key, continuing its versions', async () => {
    const own = await call('POST', 'schemes', 201, { _type: 'Scheme', label: 'Again' }, eve);
    await call('DELETE', `schemes/${own.id}`, 204, undefined, eve);
    const again = await call('PUT', `schemes/${own.id}`, 201, { _type: 'Scheme', label: 'Again' }, eve);
    expect(again._version).to.be.above(own._version);
  });
});
