import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../helpers/service.ts';

type Json = Record<string, any>;

async function expectStatus(r: Response, status: number): Promise<Json> {
  const text = await r.text();
  expect(r.status, text).to.equal(status);
  return text ? JSON.parse(text) : {};
}

const labelsOf = (list: Json, name: string) => list._embedded[name].map((o: Json) => o.label).sort();

describe('REST interface: lists', () => {
  let t: TestService;
  let db: string;
  const call = async (method: string, path: string, status: number, json?: unknown) =>
    expectStatus(await t.request(`/rest/${db}/${path}`, { method, json }), status);
  const post = (path: string, json: Json) => call('POST', path, 201, json);

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
  });
  after(() => t.close());

  /** A fresh scheme with classifiers A (with an attribute), B and C. */
  async function schemeWithClassifiers(label: string) {
    const scheme = await post('schemes', { _type: 'Scheme', label });
    const path = `schemes/${scheme.id}/classifiers`;
    const a = await post(path, { _type: 'Classifier', label: 'A', title: 'old A' });
    const b = await post(path, { _type: 'Classifier', label: 'B', title: 'old B' });
    const c = await post(path, { _type: 'Classifier', label: 'C', title: 'old C' });
    const attribute = await post(`classifiers/${a.id}/attributes`, { _type: 'BusinessAttribute', label: 'attr' });
    return { scheme, path, a, b, c, attribute };
  }

  describe('POST', () => {
    it('creates an object in the list named by the path: 201, Location of the object, the object as body', async () => {
      const { scheme, path } = await schemeWithClassifiers('Post');
      const r = await t.request(`/rest/${db}/${path}`, { method: 'POST', json: { _type: 'Classifier', label: 'D' } });
      const created = await expectStatus(r, 201);
      expect(r.headers.get('location')).to.equal(`${t.url}/rest/${db}/classifiers/${created.id}`);
      expect(created).to.include({ _type: 'Classifier', label: 'D', parentId: scheme.id, modelId: scheme.id, status: 'WORKING' });
      expect((await call('GET', r.headers.get('location')!.slice(`${t.url}/rest/${db}/`.length), 200)).id).to.equal(created.id);
    });

    it('creates an attribution through the list of all attributions in the attributedTo list of its asset', async () => {
      const { a } = await schemeWithClassifiers('Post Attribution');
      const org = await post('organizations', { _type: 'Organization', label: 'Post Org' });
      const attribution = await post('attributions', { _type: 'Attribution', attributionFor: a.id, attributedTo: org.id });
      expect(attribution.parentId).to.equal(a.id);
      const list = await call('GET', `classifiers/${a.id}/attributedTo`, 200);
      expect(list._embedded.attributedTo.map((o: Json) => o.id)).to.deep.equal([attribution.id]);
    });

    it('refuses POST on an object path (405) and on a list whose objects need a parent the path does not give (400)', async () => {
      const { a } = await schemeWithClassifiers('Post Refused');
      await call('POST', `classifiers/${a.id}`, 405, { _type: 'Classifier', label: 'X' });
      // Distributions name no parent: their flat list takes none. Classifiers name theirs (decisions §7.1), one of two references.
      await call('POST', 'distributions', 405, { _type: 'Distribution', label: 'X' });
      const body = await call('POST', 'assets', 400, { _type: 'Classifier', label: 'X' });
      expect(body.violations.map((v: Json) => v.path)).to.deep.equal(['inCollection']);
      expect((await call('POST', 'assets', 400, { _type: 'Distribution', label: 'X' })).violations.map((v: Json) => v.path)).to.deep.equal(['_type']);
    });

    it('creates a root object through a list of a supertype in its own root list', async () => {
      const s = await post('assets', { _type: 'Scheme', label: 'Via Assets' });
      expect((await call('GET', 'schemes/Via%20Assets', 200)).id).to.equal(s.id);
    });
  });

  describe('PUT', () => {
    it('replaces every listed object, creates the missing ones and deletes every unlisted one with its descendants', async () => {
      const { path, a, b, c, attribute } = await schemeWithClassifiers('Put');
      const result = await call('PUT', path, 200, [
        { _type: 'Classifier', label: 'A' },
        { _type: 'Classifier', id: b.id, label: 'B renamed', description: 'new B' },
        { _type: 'Classifier', label: 'D', title: 'new D' },
      ]);
      expect(result.total).to.equal(3);
      expect(labelsOf(result, 'classifiers')).to.deep.equal(['A', 'B renamed', 'D']);
      const byLabel = Object.fromEntries(result._embedded.classifiers.map((o: Json) => [o.label, o]));
      expect(byLabel.A).to.include({ id: a.id, _version: 2 }).and.not.have.key('title');
      expect(byLabel['B renamed']).to.include({ id: b.id, description: 'new B' }).and.not.have.key('title');
      expect(byLabel.D).to.include({ title: 'new D', _version: 1 });
      await call('GET', `classifiers/${c.id}`, 404);
      // A itself was kept, so its attribute is too.
      await call('GET', `attributes/${attribute.id}`, 200);
      expect(await call('GET', path, 200)).to.deep.equal(result);
    });

    it('empties the list with an empty array', async () => {
      const { path, attribute } = await schemeWithClassifiers('Put Empty');
      expect((await call('PUT', path, 200, [])).total).to.equal(0);
      await call('GET', `attributes/${attribute.id}`, 404);
    });

    it('changes nothing when the last item is invalid', async () => {
      const { path } = await schemeWithClassifiers('Put Invalid');
      const before = await call('GET', path, 200);
      const body = await call('PUT', path, 400, [
        { _type: 'Classifier', label: 'A', title: 'changed' },
        { _type: 'Classifier', label: 'New' },
        { _type: 'Classifier', label: 'Broken', abstract: 'yes' },
      ]);
      expect(body.violations).to.deep.equal([{ path: '2.abstract', message: 'The value must be true or false.' }]);
      expect(await call('GET', path, 200)).to.deep.equal(before);
    });

    it('changes nothing when the last item fails only after the others were written', async () => {
      const before = await call('GET', 'users', 200);
      const user = (loginId: string, password: string) => ({ _type: 'User', loginId, password, accessLevel: 'EDITOR' });
      const body = await call('PUT', 'users', 400, [...before._embedded.users, user('list-a', 'long-enough-1'), user('list-b', 'short')]);
      expect(body.violations.map((v: Json) => v.path)).to.deep.equal([`${before.total + 1}.password`]);
      expect(await call('GET', 'users', 200)).to.deep.equal(before);
    });

    it('answers 409 with a violation on label when two items have the same label, and changes nothing', async () => {
      const { path } = await schemeWithClassifiers('Put Twice');
      const before = await call('GET', path, 200);
      const body = await call('PUT', path, 409, [{ _type: 'Classifier', label: 'Same' }, { _type: 'Classifier', label: 'Same', title: 'x' }]);
      expect(body.violations).to.deep.equal([{ path: '1.label', message: 'The label is already taken.' }]);
      expect(await call('GET', path, 200)).to.deep.equal(before);
    });

    it('lets listed objects take the labels of unlisted ones, which are deleted', async () => {
      const { path, a, b } = await schemeWithClassifiers('Put Take Over');
      const result = await call('PUT', path, 200, [{ _type: 'Classifier', id: a.id, label: 'C' }, { _type: 'Classifier', id: b.id, label: 'B' }]);
      expect(labelsOf(result, 'classifiers')).to.deep.equal(['B', 'C']);
      expect(result._embedded.classifiers.find((o: Json) => o.label === 'C').id).to.equal(a.id);
    });

    it('lets listed objects swap labels, and a new object take the label an existing one gives up', async () => {
      const { path, a, b } = await schemeWithClassifiers('Put Swap');
      let result = await call('PUT', path, 200, [{ _type: 'Classifier', id: a.id, label: 'B' }, { _type: 'Classifier', id: b.id, label: 'A' }]);
      expect(result._embedded.classifiers.map((o: Json) => [o.label, o.id])).to.deep.equal([['A', b.id], ['B', a.id]]);
      result = await call('PATCH', path, 200, [{ id: b.id, label: 'A2' }, { _type: 'Classifier', label: 'A' }]);
      expect(labelsOf(result, 'classifiers')).to.deep.equal(['A', 'A2', 'B']);
    });

    it('replaces the list of all persons: creates, replaces and deletes across organizations', async () => {
      const org = await post('organizations', { _type: 'Organization', label: 'All Persons' });
      const old = await post('organizations/All%20Persons/persons', { _type: 'Person', givenName: 'Old', familyName: 'One' });
      const kept = await post('organizations/All%20Persons/persons', { _type: 'Person', givenName: 'Kept', familyName: 'One' });
      const all = await call('GET', 'persons', 200);
      const others = all._embedded.persons.filter((p: Json) => p.agentOf !== org.id);
      const result = await call('PUT', 'persons', 200, [...others, { ...kept, email: 'kept@example.org' }, { _type: 'Person', givenName: 'New', agentOf: org.id }]);
      expect(result.total).to.equal(others.length + 2);
      await call('GET', `persons/${old.id}`, 404);
      expect(await call('GET', `persons/${kept.id}`, 200)).to.include({ email: 'kept@example.org', _version: 2 });
      expect(labelsOf(await call('GET', 'organizations/All%20Persons/persons', 200), 'persons')).to.deep.equal(['Kept One', 'New']);
    });

    it('refuses an object listed twice under its technical key', async () => {
      const { path, a } = await schemeWithClassifiers('Put Listed Twice');
      const body = await call('PUT', path, 400, [{ _type: 'Classifier', id: a.id, label: 'A' }, { _type: 'Classifier', id: a.id, label: 'A again' }]);
      expect(body.violations).to.deep.equal([{ path: '1.id', message: 'The object is listed more than once.' }]);
    });

    it('refuses an object instead of an array', async () => {
      const { path } = await schemeWithClassifiers('Put Object');
      const body = await call('PUT', path, 400, { _type: 'Classifier', label: 'A' });
      expect(body.violations).to.deep.equal([{ path: '', message: 'The value must be a list (a JSON array).' }]);
    });
  });

  describe('PATCH', () => {
    it('modifies every listed object, creates the missing ones and keeps the unlisted ones', async () => {
      const { path, a, b, c } = await schemeWithClassifiers('Patch');
      const result = await call('PATCH', path, 200, [{ label: 'A', description: 'patched' }, { _type: 'Classifier', label: 'D' }]);
      expect(labelsOf(result, 'classifiers')).to.deep.equal(['A', 'B', 'C', 'D']);
      expect(await call('GET', `classifiers/${a.id}`, 200)).to.include({ title: 'old A', description: 'patched', _version: 2 });
      expect(await call('GET', `classifiers/${b.id}`, 200)).to.include({ title: 'old B', _version: 1 });
      await call('GET', `classifiers/${c.id}`, 200);
    });

    it('with operation=REPLACE also deletes the unlisted ones, with their descendants', async () => {
      const { path, a, b, attribute } = await schemeWithClassifiers('Patch Replace');
      const result = await call('PATCH', `${path}?operation=REPLACE`, 200, [{ id: b.id, description: 'patched' }, { _type: 'Classifier', label: 'D' }]);
      expect(labelsOf(result, 'classifiers')).to.deep.equal(['B', 'D']);
      expect(await call('GET', `classifiers/${b.id}`, 200)).to.include({ title: 'old B', description: 'patched' });
      await call('GET', `classifiers/${a.id}`, 404);
      await call('GET', `attributes/${attribute.id}`, 404);
    });

    it('refuses an operation other than REPLACE', async () => {
      const { path } = await schemeWithClassifiers('Patch Operation');
      const body = await call('PATCH', `${path}?operation=MERGE`, 400, []);
      expect(body.message).to.equal('The parameter operation is invalid.');
    });
  });

  describe('DELETE', () => {
    it('removes every object of the list with its descendants and keeps the owner (204)', async () => {
      const { scheme, path, a, attribute } = await schemeWithClassifiers('Delete');
      const other = await post(`schemes/${scheme.id}/enumerations`, { _type: 'Enumeration', label: 'E' });
      const r = await t.request(`/rest/${db}/${path}`, { method: 'DELETE' });
      expect(r.status).to.equal(204);
      expect(await r.text()).to.equal('');
      expect((await call('GET', path, 200)).total).to.equal(0);
      await call('GET', `classifiers/${a.id}`, 404);
      await call('GET', `attributes/${attribute.id}`, 404);
      await call('GET', `enumerations/${other.id}`, 200);
      await call('GET', `schemes/${scheme.id}`, 200);
    });
  });

  describe('paging', () => {
    it('walks a list of 25 in pages of 10 along the next links, without duplicates or gaps', async () => {
      const scheme = await post('schemes', { _type: 'Scheme', label: 'Paged' });
      // Labels that sort differently by byte and by language collation, to catch a cursor in the wrong order.
      const labels = Array.from({ length: 25 }, (_, i) => `${i % 2 ? 'a' : 'B'} ${String(i).padStart(2, '0')}`);
      await call('PUT', `schemes/${scheme.id}/classifiers`, 200, labels.map((label) => ({ _type: 'Classifier', label })));
      const seen: string[] = [];
      const sizes: number[] = [];
      let next: string | undefined = `${t.url}/rest/${db}/schemes/${scheme.id}/classifiers?limit=10`;
      while (next) {
        const page = await expectStatus(await t.request(next.slice(t.url.length)), 200);
        expect(page.total).to.equal(25);
        expect(page._links.self.href).to.equal(next);
        sizes.push(page._embedded.classifiers.length);
        seen.push(...page._embedded.classifiers.map((o: Json) => o.label));
        next = page._links.next?.href;
      }
      expect(sizes).to.deep.equal([10, 10, 5]);
      expect(new Set(seen).size).to.equal(25);
      expect([...seen].sort()).to.deep.equal([...labels].sort());
      const whole = await call('GET', `schemes/${scheme.id}/classifiers`, 200);
      expect(whole._embedded.classifiers.map((o: Json) => o.label)).to.deep.equal(seen);
      expect(whole._links).not.to.have.key('next');
    });

    it('gives no next link when the last page is exactly full', async () => {
      const scheme = await post('schemes', { _type: 'Scheme', label: 'Paged Exactly' });
      await call('PUT', `schemes/${scheme.id}/classifiers`, 200, ['x', 'y'].map((label) => ({ _type: 'Classifier', label })));
      const page = await call('GET', `schemes/${scheme.id}/classifiers?limit=2`, 200);
      expect(page._embedded.classifiers).to.have.length(2);
      expect(page._links).not.to.have.key('next');
    });

    it('pages a list read as of a time the same way', async () => {
      const scheme = await post('schemes', { _type: 'Scheme', label: 'Paged History' });
      const written = await call('PUT', `schemes/${scheme.id}/classifiers`, 200, ['p', 'q', 'r', 's', 't'].map((label) => ({ _type: 'Classifier', label })));
      const at = Math.max(...written._embedded.classifiers.map((o: Json) => o.dateModified));
      await call('DELETE', `schemes/${scheme.id}/classifiers`, 204);
      const seen: string[] = [];
      let next: string | undefined = `${t.url}/rest/${db}/schemes/${scheme.id}/classifiers?version=${at}&limit=2`;
      while (next) {
        const page = await expectStatus(await t.request(next.slice(t.url.length)), 200);
        expect(page.total).to.equal(5);
        seen.push(...page._embedded.classifiers.map((o: Json) => o.label));
        next = page._links.next?.href;
      }
      expect(seen).to.deep.equal(['p', 'q', 'r', 's', 't']);
    });

    it('pages the list of all objects of a type too', async () => {
      const first = await call('GET', 'classifiers?limit=3', 200);
      expect(first._embedded.classifiers).to.have.length(3);
      const second = await expectStatus(await t.request(first._links.next.href.slice(t.url.length)), 200);
      expect(second.total).to.equal(first.total);
      const ids = [...first._embedded.classifiers, ...second._embedded.classifiers].map((o: Json) => o.id);
      expect(new Set(ids).size).to.equal(ids.length);
    });
  });
});
