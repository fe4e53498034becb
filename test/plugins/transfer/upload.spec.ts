/**
 * Decisions §8, uploads: operations, dry runs, business keys, bad files,
 * access (from the attacker's side), history, and the job address space.
 */
import { expect } from 'chai';
import { parse, stringify } from 'yaml';
import { createDatabase, logLines, startService, type TestService } from '../../helpers/service.ts';
import { ProfileStore } from '../../../plugins/profiles/store.ts';
import { createTenant, createUser, secret } from '../../auth/fixtures.ts';
import { ANNOTATIONS, downloaded, financeModel, rest, uploaded, uploadFile, type Json } from './fixtures.ts';

const LIMIT = 64 * 1024;

describe('transfer: upload', function () {
  this.timeout(180_000);
  let t: TestService;
  let db: string;
  let json: string;
  const editor = { loginId: 'eddie', password: secret('eddie-Passwort-1') };
  const reader = { loginId: 'rita', password: secret('rita-Passwort-1') };
  const admin = { loginId: 'ada', password: secret('ada-Passwort-1') };
  const stranger = { loginId: 'otto', password: secret('otto-Passwort-1') };

  before(async function () {
    // Users' passwords are hashed with argon2 and the model is made call by call: slow on a busy machine.
    this.timeout(300_000);
    t = await startService({ SERVICE_BODY_LIMIT: String(LIMIT) });
    db = await createDatabase(t);
    await createUser(t, db, { ...editor, accessLevel: 'EDITOR' });
    await createUser(t, db, { ...reader, accessLevel: 'READ_ONLY' });
    await createUser(t, db, { ...admin, accessLevel: 'ADMINISTRATOR' });
    await createTenant(t, db, 'Other');
    await createUser(t, db, { ...stranger, accessLevel: 'ADMINISTRATOR', tenant: 'Other' });
    await financeModel(t, db);
    json = (await downloaded(t, db, '/schemes/Finance/download')).text;
  });
  after(() => t?.close());

  const tree = () => JSON.parse(json) as Json;
  const schemeExists = async (label: string) => (await t.request(`/rest/${db}/schemes/${encodeURIComponent(label)}`)).status === 200;

  it('creates a scheme that does not exist, as the uploader, and answers 202 with the job', async () => {
    const file = JSON.stringify({ ...tree(), label: 'ignored', customProperties: undefined });
    const job = await uploaded(t, db, '/schemes/Copy/upload', file, 'copy.json', '', editor);
    expect(job.location).to.match(new RegExp(`/api/${db}/jobs/${job.id}/statistics$`));
    expect(job.statistics.status, JSON.stringify(job.logs)).to.equal('COMPLETED');
    const copy = await rest(t, 'GET', `/rest/${db}/schemes/Copy`);
    expect(copy).to.include({ createdBy: 'eddie', modifiedBy: 'eddie', description: 'Line one,\n"quoted"' });
    const history = await rest(t, 'GET', `/rest/${db}/schemes/Copy/history`);
    expect(JSON.stringify(history)).to.include('eddie');
    // The job is in the list of jobs, of kind upload, the editor's own.
    const mine = await (await t.request(`/api/${db}/jobs?mine=true`, { auth: editor })).json();
    expect(mine._embedded.jobs.find((j: Json) => j.id === job.id)).to.include({ kind: 'upload', createdBy: 'eddie', format: 'JSON', status: 'COMPLETED' });
    expect(job.report.created).to.include('Copy').and.include('"Org/Ä"/Invoices');
  });

  it('MERGE updates what the file names and reports which properties changed; REPLACE deletes what it does not name', async () => {
    const file = tree();
    file.description = 'new';
    file.collections[0].datasets[0].customProperties.seiten = 4;
    const merged = await uploaded(t, db, '/schemes/Finance/upload', JSON.stringify(file), 'Finance.json', 'operation=MERGE', editor);
    expect(merged.statistics.statistics).to.include({ updated: 2, created: 0, deleted: 0, failed: 0 });
    expect(merged.report.updated).to.deep.equal([
      { key: 'Finance', properties: ['description'] },
      { key: '"Org/Ä"/Invoices', properties: ['customProperties.seiten'] },
    ]);
    delete file.processings;
    const replaced = await uploaded(t, db, '/schemes/Finance/upload', JSON.stringify(file), 'Finance.json', 'operation=REPLACE', admin);
    expect(replaced.statistics.status, JSON.stringify(replaced.logs)).to.equal('COMPLETED');
    expect(replaced.report.deleted).to.deep.equal(['Billing']);
    expect((await t.request(`/rest/${db}/schemes/Finance/processings`)).status).to.equal(200);
    expect((await rest(t, 'GET', `/rest/${db}/schemes/Finance/processings`)).total ?? (await rest(t, 'GET', `/rest/${db}/schemes/Finance/processings`)).totalCount).to.equal(0);
  });

  it('a dry run reports what it would do and writes nothing; ADD refuses what exists', async () => {
    const file = JSON.parse((await downloaded(t, db, '/schemes/Finance/download')).text);
    file.classifiers.push({ _type: 'Classifier', label: 'New one' });
    const dry = await uploaded(t, db, '/schemes/Finance/upload', JSON.stringify(file), 'Finance.json', 'dryRun=true', editor);
    expect(dry.statistics.statistics.created).to.equal(1);
    expect(dry.report).to.include({ dryRun: true });
    expect(dry.report.created).to.deep.equal(['New one']);
    expect((await t.request(`/rest/${db}/schemes/Finance/classifiers/New%20one`)).status).to.equal(404);
    const add = await uploaded(t, db, '/schemes/Finance/upload', JSON.stringify(file), 'Finance.json', 'operation=ADD', editor);
    expect(add.statistics.status).to.equal('FAILED');
    expect(add.logs.some((l) => /^Refused: "Org\/Ä" \(line \d+, column \d+\), -: The object exists already \(operation ADD only creates\)\.$/.test(l.message)), JSON.stringify(add.logs)).to.equal(true);
    expect((await t.request(`/rest/${db}/schemes/Finance/classifiers/New%20one`)).status).to.equal(404);
  });

  it('fails the whole job for a reference that names nothing, or a bad value, naming the object, line and column; nothing is written', async () => {
    const file = tree();
    file.label = 'Broken';
    file.collections[0].datasets[0].usages[0].usageOf = '/Data Domains/Nothing';
    file.classifiers[0].status = 'NOT_A_STATUS';
    const text = JSON.stringify(file, null, 2);
    const job = await uploaded(t, db, '/schemes/Broken/upload', text, 'broken.json', '', editor);
    expect(job.statistics.status).to.equal('FAILED');
    // The two refused, and the attribute below the refused classifier.
    expect(job.statistics.statistics.failed).to.equal(3);
    const errors = job.logs.filter((l) => l.level === 'ERROR').map((l) => l.message);
    const usageLine = text.split('\n').findIndex((l) => l.includes('"usages"')) + 2;
    expect(errors, errors.join("\n")).to.include(`Refused: "Org/Ä"/Invoices/<Usage> (line ${usageLine}, column 13), usageOf: The business key /Data Domains/Nothing names no object (in the file, the model, or another model).`);
    expect(errors.some((e) => /^Refused: Customer \(line \d+, column 5\), status: The value is not allowed/.test(e)), errors.join('\n')).to.equal(true);
    expect(errors).to.have.length(3);
    expect(await schemeExists('Broken')).to.equal(false);
  });

  it('fails a malformed file with its line and column, and refuses bad requests before a job: format, media type, size', async () => {
    const job = await uploaded(t, db, '/schemes/Bad/upload', '{\n  "_type": "Scheme",\n  "label": x\n}', 'bad.json', '', editor);
    expect(job.statistics.status).to.equal('FAILED');
    expect(job.logs.at(-1)!.message).to.match(/^The file cannot be read: JSON: .* \(line 3, column \d+\)\.$/);
    const yaml = await uploaded(t, db, '/schemes/Bad/upload', '_type: Scheme\nlabel: [unclosed\n', 'bad.yaml', '', editor);
    expect(yaml.statistics.status).to.equal('FAILED');
    expect(yaml.logs.at(-1)!.message).to.match(/^The file cannot be read: YAML: .* \(line \d+, column \d+\)\.$/s);
    const bomb = await uploaded(t, db, '/schemes/Bad/upload', '_type: Scheme\nlabel: &a Bad\ndescription: *a\n', 'bomb.yaml', '', editor);
    expect(bomb.logs.at(-1)!.message).to.match(/aliases/);
    const unknown = await uploadFile(t, db, '/schemes/Bad/upload', '{}', 'x.json', 'format=DOCX', editor);
    expect(unknown.status).to.equal(400);
    expect(JSON.stringify(unknown.body)).to.include('JSON, YAML');
    expect((await uploadFile(t, db, '/schemes/Bad/upload', '{}', 'x.docx', '', editor)).status).to.equal(415);
    const plain = await t.request(`/api/${db}/schemes/Bad/upload`, { method: 'PUT', json: tree(), auth: editor });
    expect(plain.status).to.equal(415);
    const big = await uploadFile(t, db, '/schemes/Bad/upload', 'x'.repeat(LIMIT + 1), 'big.json', '', editor);
    expect(big.status).to.equal(413);
    expect(await schemeExists('Bad')).to.equal(false);
    const badFormat = await downloaded(t, db, '/schemes/Finance/download', 'format=CSV2');
    expect(badFormat.status).to.equal(400);
    expect(badFormat.text).to.include('JSON, YAML');
  });

  it('refuses readers, editors replacing a whole scheme, other tenants, and other users\' jobs', async () => {
    const file = json;
    expect((await uploadFile(t, db, '/schemes/Finance/upload', file, 'Finance.json', '', reader)).status).to.equal(403);
    expect((await uploadFile(t, db, '/schemes/Finance/upload', file, 'Finance.json', 'operation=REPLACE', editor)).status).to.equal(403);
    // Readers may download; another tenant does not see the scheme at all.
    expect((await downloaded(t, db, '/schemes/Finance/download', 'format=YAML', reader)).status).to.equal(200);
    expect((await downloaded(t, db, '/schemes/Finance/download', 'format=JSON', stranger)).status).to.equal(404);
    // In their own tenant the upload is one into a new scheme of their own: the default tenant's objects are not
    // theirs to reference (the keys across models name nothing there), and nothing of either tenant is written.
    const theirs = await uploaded(t, db, '/schemes/Finance/upload', file, 'Finance.json', '', stranger);
    expect(theirs.statistics.status).to.equal('FAILED');
    expect(theirs.logs.map((l) => l.message).join('\n')).to.include('/Data Domains/Date names no object');
    expect((await t.request(`/rest/${db}/schemes/Finance`, { auth: stranger })).status).to.equal(404);
    expect((await rest(t, 'GET', `/rest/${db}/schemes/Finance`)).modifiedBy).not.to.equal('otto');
    // A job is its starter's (and its tenant's administrators'): another editor, a reader, another tenant are refused.
    const job = await uploaded(t, db, '/schemes/Finance/upload', file, 'Finance.json', 'dryRun=true', editor);
    for (const who of [reader, stranger]) {
      for (const part of ['statistics', 'logs', 'download']) {
        expect((await t.request(`/api/${db}/jobs/${job.id}/${part}`, { auth: who })).status, `${who.loginId} ${part}`).to.be.oneOf([403, 404]);
      }
    }
    expect((await t.request(`/api/${db}/jobs/${job.id}/statistics`, { auth: admin })).status).to.equal(200);
    // A tenant's users are for its administrators.
    expect((await downloaded(t, db, `/tenants/${encodeURIComponent('Default')}/download`, 'format=JSON', editor)).status).to.equal(403);
  });

  it('downloads a tenant with its users and never a secret', async () => {
    const tenants = await rest(t, 'GET', `/rest/${db}/tenants`);
    const label = (tenants._embedded?.tenants ?? tenants._embedded?.items ?? [])[0]?.label ?? 'Default';
    const d = await downloaded(t, db, `/tenants/${encodeURIComponent(label)}/download`, 'format=JSON', admin);
    expect(d.status, d.text).to.equal(200);
    const tree = JSON.parse(d.text);
    expect(tree._type).to.equal('Tenant');
    expect(tree.users.map((u: Json) => u.loginId)).to.include.members(['eddie', 'rita', 'ada']);
    for (const word of ['password', 'hash', editor.password, 'Passwort']) expect(d.text).not.to.include(word);
  });

  it('uploads into a collection', async () => {
    const org = await rest(t, 'GET', `/rest/${db}/schemes/Finance/collections/${encodeURIComponent('Org/Ä')}`);
    const d = await downloaded(t, db, `/collections/${org.id}/download`, 'format=YAML');
    expect(d.headers.get('content-disposition')).to.equal(`attachment; filename="Org_Ae.yaml"; filename*=UTF-8''Org_%C3%84.yaml`);
    const collection = parse(d.text);
    collection.datasets.find((x: Json) => x.label === 'Invoices').title = 'Rechnungen';
    const edited = stringify(collection);
    const job = await uploaded(t, db, `/collections/${org.id}/upload`, edited, 'Org.yaml', '', editor);
    expect(job.statistics.status, JSON.stringify(job.logs)).to.equal('COMPLETED');
    expect(job.report.updated).to.deep.equal([{ key: 'Invoices', properties: ['title'] }]);
  });

  it('checks custom properties against the annotations stored when the upload begins, also by another instance, reading them once', async () => {
    const tenant = (await rest(t, 'GET', `/rest/${db}/tenants/Default`)).id as string;
    const file = tree();
    file.label = 'Stamped';
    file.customProperties = { ...file.customProperties, stempel: 'A-1' };
    const before = logLines.length;
    let job = await uploaded(t, db, '/schemes/Stamped/upload', JSON.stringify(file), 'Stamped.json', '', editor);
    expect(job.statistics.status).to.equal('FAILED');
    expect(job.logs.map((l: Json) => l.message).join('\n')).to.match(/Stamped.*customProperties\.stempel/);
    // As another instance of the service would store them: straight into the shared table, past this instance's cache.
    const parsed = parse(ANNOTATIONS);
    parsed.Scheme.customProperties.stempel = { baseType: 'STRING' };
    const stored = await new ProfileStore(t.service.storage.knex, db).save(tenant, 'annotations', {
      filename: 'andere-instanz.yaml', bytes: Buffer.from(stringify(parsed)), parsed,
    }, 'admin');
    expect(stored).to.be.a('number');
    job = await uploaded(t, db, '/schemes/Stamped/upload', JSON.stringify(file), 'Stamped.json', '', editor);
    expect(job.statistics.status, JSON.stringify(job.logs)).to.equal('COMPLETED');
    expect((await rest(t, 'GET', `/rest/${db}/schemes/Stamped`)).customProperties).to.include({ stempel: 'A-1' });
    // Every object's check knew which write it belonged to (a warning per object before).
    expect(logLines.slice(before).filter((l) => /outside an observed write/.test(l))).to.deep.equal([]);
  });
});
