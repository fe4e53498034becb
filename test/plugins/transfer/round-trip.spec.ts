/**
 * Decisions §8: a download uploaded into an empty database gives the same
 * download again, byte for byte in JSON, YAML and XML, cell for cell in CSV
 * and XLSX (the same records read out of both files: a zip's entries carry
 * times of their own).
 */
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { formatNamed } from '../../../plugins/transfer/formats/index.ts';
import type { TransferRecord } from '../../../plugins/transfer/records.ts';
import { resolveMetamodel } from '../../../runtime/metamodel/resolve.ts';
import { readStandardMetamodel } from '../../../runtime/metamodel/standard.ts';
import { createDatabase, startService, type TestService } from '../../helpers/service.ts';
import { downloaded, FINANCE_SCHEMES, financeModel, otherModels, rest, uploaded } from './fixtures.ts';

describe('transfer: round trip', function () {
  this.timeout(180_000);
  let t: TestService;
  let db: string;
  let json: string;
  before(async function () {
    // Users' passwords are hashed with argon2 and the model is made call by call: slow on a busy machine.
    this.timeout(300_000);
    t = await startService();
    db = await createDatabase(t);
    await financeModel(t, db);
    const d = await downloaded(t, db, '/schemes/Finance/download');
    expect(d.status, d.text).to.equal(200);
    json = d.text;
  });
  after(() => t?.close());

  it('writes the model as one nested tree, by business key, with custom properties, in a file named after it', async () => {
    const d = await downloaded(t, db, '/schemes/Finance/download');
    expect(d.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expect(d.headers.get('content-disposition')).to.equal('attachment; filename="Finance.json"');
    // Addressed by technical key as REST paths may be.
    const scheme = await (await t.request(`/rest/${db}/schemes/Finance`)).json();
    expect((await downloaded(t, db, `/schemes/${scheme.id.toUpperCase()}/download`)).text).to.equal(json);
    const tree = JSON.parse(json);
    expect(tree).to.include({ _type: 'Scheme', label: 'Finance', description: 'Line one,\n"quoted"' });
    expect(tree.customProperties).to.deep.equal({ modellversion: '2.1' });
    // Properties in metamodel order, custom properties after them, then the lists in metamodel order.
    expect(Object.keys(tree)).to.deep.equal(['_type', 'description', 'label', 'modelType', 'status', 'customProperties',
      'classifiers', 'collections', 'enumerations', 'processings']);
    const org = tree.collections[0];
    expect(org).to.include({ _type: 'Collection', label: 'Org/Ä' });
    const invoices = org.datasets[0];
    expect(invoices.customProperties).to.deep.equal({ seiten: 3, vertraulich: true });
    expect(invoices.derivedTo).to.deep.equal([{ _type: 'Derivation', derivedTo: '"Org/Ä"/say "hi"/"Bills/Größe"', status: 'WORKING' }]);
    expect(invoices.usages[0].usageOf).to.equal('/Data Domains/Date');
    expect(invoices.attributedTo[0].attributedTo).to.equal('/Musterbank AG/Erika Müller');
    const customer = tree.classifiers.find((c: { label: string }) => c.label === 'Customer');
    expect(customer.specializes).to.equal('Party');
    expect(customer.attributes[0]).to.include({ _type: 'BusinessAttribute', label: 'Born', hasRange: '/Data Domains/Date' });
    expect(customer.attributes[0]).not.to.have.property('hasDomain');
    expect(json).not.to.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
  });

  for (const format of ['JSON', 'YAML']) {
    it(`gives the same ${format} again after an upload into an empty database, for a model of each kind`, async () => {
      const empty = await createDatabase(t);
      await otherModels(t, empty);
      const extension = format === 'JSON' ? 'json' : 'yaml';
      for (const label of FINANCE_SCHEMES) {
        const path = `/schemes/${encodeURIComponent(label)}`;
        const first = await downloaded(t, db, `${path}/download`, `format=${format}`);
        expect(first.status).to.equal(200);
        const job = await uploaded(t, empty, `${path}/upload`, first.text, `${label}.${extension}`);
        expect(job.statistics.status, JSON.stringify(job.logs)).to.equal('COMPLETED');
        expect(job.statistics.statistics).to.include({ failed: 0, updated: 0, deleted: 0, unchanged: 0 });
        expect(job.statistics.statistics.created).to.equal(job.statistics.statistics.read).and.equal(job.statistics.statistics.total);
        const again = await downloaded(t, empty, `${path}/download`, `format=${format}`);
        expect(again.text, label).to.equal(first.text);
        // And the same file again changes nothing.
        const twice = await uploaded(t, empty, `${path}/upload`, first.text, `${label}.${extension}`);
        expect(twice.statistics.statistics).to.include({ created: 0, updated: 0, deleted: 0, failed: 0 });
        expect(twice.statistics.statistics.unchanged).to.equal(twice.statistics.statistics.read);
      }
    });
  }

  for (const [format, extension] of [['CSV', 'csv.zip'], ['XLSX', 'xlsx'], ['XML', 'xml']]) {
    it(`gives the same ${format} again after an upload into an empty database, for a model of each kind`, async () => {
      const empty = await createDatabase(t);
      await otherModels(t, empty);
      for (const label of FINANCE_SCHEMES) {
        const path = `/schemes/${encodeURIComponent(label)}`;
        const first = await downloaded(t, db, `${path}/download`, `format=${format}`);
        expect(first.status, first.text.slice(0, 500)).to.equal(200);
        expect(first.headers.get('content-disposition')).to.equal(`attachment; filename="${label}.${extension}"`);
        const job = await uploaded(t, empty, `${path}/upload`, first.bytes, `${label}.${extension}`);
        expect(job.statistics.status, JSON.stringify(job.logs)).to.equal('COMPLETED');
        expect(job.statistics.statistics).to.include({ failed: 0, updated: 0, deleted: 0, unchanged: 0 });
        const again = await downloaded(t, empty, `${path}/download`, `format=${format}`);
        const [read, readFirst] = [await recordsOf(format, again.bytes), await recordsOf(format, first.bytes)];
        // Said when they differ: how many records each side has, and what the upload counted.
        const sides = `${label}: ${read.length} records again, ${readFirst.length} at first; the upload counted ${JSON.stringify(job.statistics.statistics)}`;
        expect(read, sides).to.deep.equal(readFirst);
        if (format === 'XML') expect(again.text, label).to.equal(first.text);
        // The same objects as the JSON download has (by type and parent: the JSON leaves derived labels out).
        const fromJson = await recordsOf('JSON', (await downloaded(t, db, `${path}/download`, 'format=JSON')).bytes);
        const placed = (records: TransferRecord[]) => records.map((r) => `${r.type} in ${JSON.stringify(r.key.slice(0, -1))}`).sort();
        expect(placed(await recordsOf(format, first.bytes)), label).to.deep.equal(placed(fromJson));
      }
    });
  }

  it('downloads a collection with what lies outside it named from its model root, and a past state with version', async () => {
    const tree = JSON.parse(json);
    const orgId = (await (await t.request(`/rest/${db}/schemes/Finance/collections/${encodeURIComponent('Org/Ä')}`)).json()).id;
    const before = Date.now();
    await new Promise((r) => setTimeout(r, 20));
    await t.request(`/rest/${db}/collections/${orgId}`, { method: 'PATCH', json: { description: 'changed' } });
    const now = JSON.parse((await downloaded(t, db, `/collections/${orgId}/download`)).text);
    expect(now).to.include({ _type: 'Collection', label: 'Org/Ä', description: 'changed' });
    expect(now.datasets[0].derivedTo[0].derivedTo).to.equal('say "hi"/"Bills/Größe"');
    const past = JSON.parse((await downloaded(t, db, `/collections/${orgId}/download`, `format=JSON&version=${before}`)).text);
    expect(past).not.to.have.property('description');
    expect(past.datasets).to.deep.equal(now.datasets);
    expect(past.datasets[0].usages).to.deep.equal(tree.collections[0].datasets[0].usages);
  });

  it('refuses a bad download request with a 400 or 404 in the specification\'s format, before it streams anything', async () => {
    for (const [query, path] of [['format=PDF', 'format'], ['assetTypes=Nope', 'assetTypes'], ['assetTypes=', 'assetTypes'], ['version=soon', 'version']]) {
      const d = await downloaded(t, db, '/schemes/Finance/download', query);
      expect(d.status, `${query}: ${d.text}`).to.equal(400);
      const body = JSON.parse(d.text);
      expect(body.violations.map((v: { path: string }) => v.path), query).to.deep.equal([path]);
    }
    for (const path of ['/schemes/Nowhere/download', '/collections/00000000-0000-4000-8000-000000000000/download', '/tenants/Nowhere/download']) {
      const d = await downloaded(t, db, path);
      expect(d.status, `${path}: ${d.text}`).to.equal(404);
      expect(JSON.parse(d.text)).to.include({ statusCode: 404 });
    }
  });

  it('narrows a download to assetTypes, keeping what holds them', async () => {
    const tree = JSON.parse((await downloaded(t, db, '/schemes/Finance/download', 'format=JSON&assetTypes=Dataset')).text);
    expect(Object.keys(tree).filter((k) => Array.isArray(tree[k]) && typeof tree[k][0] === 'object')).to.deep.equal(['collections']);
    expect(tree.collections[0].datasets.map((d: { label: string }) => d.label)).to.deep.equal(['Invoices']);
    expect(tree.collections[0].datasets[0]).not.to.have.property('distributions');
  });

  it('downloads a list longer than one read reaches whole and in order, with what its later objects hold, and gives it again', async function () {
    // 5,010 classifiers in one collection: the walk reads 5,000 children in one statement (download.ts AHEAD_ROWS) and
    // the rest a page at a time, which says which of them hold something; some early and some late ones have attributes.
    this.timeout(300_000);
    const held = new Set([0, 1, 4999, 5000, 5007, 5009]);
    const classifiers = Array.from({ length: 5010 }, (_, i) => ({
      _type: 'Classifier', label: `C${String(i).padStart(5, '0')}`,
      ...(held.has(i) ? { attributes: [{ _type: 'BusinessAttribute', label: `a${i}`, dataType: 'STRING' }] } : {}),
    }));
    const file = JSON.stringify({ _type: 'Scheme', label: 'Long', collections: [{ _type: 'Collection', label: 'Wide', classifiers }] });
    const first = await createDatabase(t);
    const up = await uploaded(t, first, '/schemes/Long/upload', file, 'Long.json');
    expect(up.statistics.status, JSON.stringify(up.logs)).to.equal('COMPLETED');
    const d = await downloaded(t, first, '/schemes/Long/download');
    expect(d.status, d.text).to.equal(200);
    const wide = JSON.parse(d.text).collections[0].classifiers as { label: string; attributes?: { label: string }[] }[];
    expect(wide.map((c) => c.label)).to.deep.equal(classifiers.map((c) => c.label));
    expect(wide.flatMap((c) => (c.attributes ?? []).map((a) => a.label))).to.deep.equal([...held].map((i) => `a${i}`));
    // Uploaded into an empty database, the download gives the same bytes again.
    const second = await createDatabase(t);
    const again = await uploaded(t, second, '/schemes/Long/upload', d.text, 'Long.json');
    expect(again.statistics.status, JSON.stringify(again.logs)).to.equal('COMPLETED');
    expect((await downloaded(t, second, '/schemes/Long/download')).text).to.equal(d.text);
  });

  it('asks whether objects hold something only of types whose lists can hold a type the tenant has, and asks it once the tenant has one', async () => {
    // download.ts (branchTypes): attributes' lists hold relations (usages, derivations, …); without any in the tenant,
    // the walk neither looks below each attribute nor reads its lists.
    const target = await createDatabase(t);
    const file = JSON.stringify({ _type: 'Scheme', label: 'Plain', collections: [{ _type: 'Collection', label: 'C', classifiers: [{
      _type: 'Classifier', label: 'K', attributes: ['a', 'b'].map((label) => ({ _type: 'BusinessAttribute', label, dataType: 'STRING' })),
    }] }] });
    const up = await uploaded(t, target, '/schemes/Plain/upload', file, 'Plain.json');
    expect(up.statistics.status, JSON.stringify(up.logs)).to.equal('COMPLETED');
    const knex = t.service.storage.knex;
    const lookedBelow: string[][] = [];
    const listener = (q: { sql: string; bindings: unknown[] }) => {
      if (/json_build_array/.test(q.sql) && /c\.type = any/.test(q.sql)) lookedBelow.push(q.bindings[0] as string[]);
    };
    const attributes = async () => {
      lookedBelow.length = 0;
      knex.on('query', listener);
      try {
        const d = await downloaded(t, target, '/schemes/Plain/download');
        expect(d.status, d.text).to.equal(200);
        return JSON.parse(d.text).collections[0].classifiers[0].attributes as { label: string; usages?: { usageOf: string }[] }[];
      } finally {
        knex.off('query', listener);
      }
    };
    expect((await attributes()).map((a) => a.label)).to.deep.equal(['a', 'b']);
    expect(lookedBelow).not.to.deep.equal([]);
    for (const types of lookedBelow) expect(types).to.include('Classifier').and.not.include('BusinessAttribute');
    // A usage below one attribute: now the walk looks below attributes, and finds it.
    const a = (await rest(t, 'GET', `/rest/${target}/schemes/Plain/collections/C/classifiers/K/attributes/a`)) as { id: string };
    const b = (await rest(t, 'GET', `/rest/${target}/schemes/Plain/collections/C/classifiers/K/attributes/b`)) as { id: string };
    await rest(t, 'POST', `/rest/${target}/attributes/${a.id}/usages`, { _type: 'Usage', usageOf: b.id });
    const [withUsage, without] = await attributes();
    expect(withUsage.usages?.map((u) => u.usageOf)).to.deep.equal(['C/K/b']);
    expect(without).not.to.have.property('usages');
    for (const types of lookedBelow) expect(types).to.include('BusinessAttribute');
  });
});

const model = resolveMetamodel(readStandardMetamodel());

/** The records a format reads out of a file, without their positions in it. */
async function recordsOf(format: string, bytes: Buffer): Promise<TransferRecord[]> {
  const records: TransferRecord[] = [];
  const context = { typeOf: (name: string) => model.types[name], language: 'en' as const };
  for await (const r of formatNamed(format)!.read(Readable.from([bytes]), context)) records.push({ ...r, source: undefined });
  return records;
}
