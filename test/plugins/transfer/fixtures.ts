/**
 * A model for the upload and download tests, made through the REST
 * interface as a client would: every concrete type of the standard
 * metamodel below a scheme, custom properties from the tenant's
 * annotations, references across models (to another scheme and to an
 * organization), labels with `/`, umlauts and quotes.
 */
import { expect } from 'chai';
import type { TestService } from '../../helpers/service.ts';
import { finished, rest, type Json } from '../query/fixtures.ts';
import type { Credentials } from '../../auth/fixtures.ts';

export { finished, rest, type Json };

export const ANNOTATIONS = `
Scheme:
  customProperties:
    modellversion: { label: Modellversion, baseType: STRING }
Dataset:
  customProperties:
    vertraulich: { label: Vertraulich, baseType: BOOLEAN }
    seiten: { label: Seiten, baseType: INTEGER }
Organization:
  customProperties:
    kostenstelle: { label: Kostenstelle, baseType: STRING }
`;

export async function annotate(t: TestService, db: string) {
  const form = new FormData();
  form.append('file', new Blob([ANNOTATIONS]), 'annotations.yaml');
  const r = await t.request(`/api/${db}/profiles/annotations/upload`, { method: 'PUT', body: form });
  expect(r.status, await r.text()).to.equal(200);
}

/** What other models hold: an organization with a person, and a scheme of data domains. Made the same way in every database. */
export async function otherModels(t: TestService, db: string) {
  await annotate(t, db);
  const org = await rest(t, 'POST', `/rest/${db}/organizations`, { _type: 'Organization', label: 'Musterbank AG', customProperties: { kostenstelle: 'KST-1' } });
  const person = await rest(t, 'POST', `/rest/${db}/organizations/${org.id}/persons`, { _type: 'Person', givenName: 'Erika', familyName: 'Müller' });
  const post = await rest(t, 'POST', `/rest/${db}/organizations/${org.id}/posts`, { _type: 'Post', label: 'Leitung' });
  await rest(t, 'POST', `/rest/${db}/persons/${person.id}/holdsPost`, { _type: 'HoldsPost', holdsPost: post.id });
  await rest(t, 'POST', `/rest/${db}/organizations/${org.id}/groups`, { _type: 'Group', label: 'Team "A"' });
  await rest(t, 'POST', `/rest/${db}/schemes`, { _type: 'Scheme', label: 'Data Domains', modelType: 'DataModel' });
  const date = await rest(t, 'POST', `/rest/${db}/schemes/${encodeURIComponent('Data Domains')}/datatypes`, { _type: 'Datatype', label: 'Date' });
  return { person, date };
}

/**
 * The schemes a kind of model holds what it may (decisions §7.1): `Finance`, a data catalog, and beside it a
 * data model, a system catalog and a reference data model; together every type the metamodel has below a scheme.
 */
export const FINANCE_SCHEMES = ['Finance', 'Finance Data', 'Finance Systems', 'Finance Codes'];

/** The scheme `Finance` and its companions (FINANCE_SCHEMES), with every type the metamodel has below a scheme. */
export async function financeModel(t: TestService, db: string) {
  const { person, date } = await otherModels(t, db);
  const post = (path: string, body: Json) => rest(t, 'POST', `/rest/${db}${path}`, body);
  const scheme = await post('/schemes', { _type: 'Scheme', label: 'Finance', modelType: 'DataCatalog', description: 'Line one,\n"quoted"', customProperties: { modellversion: '2.1' } });
  const org = await post(`/schemes/${scheme.id}/collections`, { _type: 'Collection', label: 'Org/Ä', tags: ['x', 'y'] });
  const inner = await post(`/collections/${org.id}/collections`, { _type: 'Collection', label: 'say "hi"' });
  const invoices = await post(`/collections/${org.id}/datasets`, { _type: 'Dataset', label: 'Invoices', customProperties: { vertraulich: true, seiten: 3 } });
  const bills = await post(`/collections/${inner.id}/datasets`, { _type: 'Dataset', label: 'Bills/Größe' });
  await post(`/datasets/${invoices.id}/distributions`, { _type: 'Distribution', label: 'CSV' });
  await post(`/datasets/${invoices.id}/derivedTo`, { _type: 'Derivation', derivedTo: bills.id });
  await post(`/datasets/${invoices.id}/usages`, { _type: 'Usage', usageOf: date.id });
  await post(`/datasets/${invoices.id}/attributedTo`, { _type: 'Attribution', attributedTo: person.id });
  const party = await post(`/schemes/${scheme.id}/classifiers`, { _type: 'Classifier', label: 'Party' });
  const customer = await post(`/schemes/${scheme.id}/classifiers`, { _type: 'Classifier', label: 'Customer', specializes: party.id });
  await post(`/classifiers/${customer.id}/attributes`, { _type: 'BusinessAttribute', label: 'Born', hasRange: date.id });
  const colors = await post(`/schemes/${scheme.id}/enumerations`, { _type: 'Enumeration', label: 'Colors' });
  await post(`/enumerations/${colors.id}/literals`, { _type: 'Literal', label: 'Red' });
  await post(`/schemes/${scheme.id}/processings`, { _type: 'Processing', label: 'Billing' });

  const codes = await post('/schemes', { _type: 'Scheme', label: 'Finance Codes', modelType: 'ReferenceDataModel' });
  const countries = await post(`/schemes/${codes.id}/enumerations`, { _type: 'ReferenceObject', label: 'Countries' });
  await post(`/enumerations/${countries.id}/literals`, { _type: 'ReferenceValue', label: 'DE', timeSeries: [{ code: 'DE', shortText: 'Deutschland', validFrom: Date.UTC(1990, 9, 3) }] });
  const systems = await post('/schemes', { _type: 'Scheme', label: 'Finance Systems', modelType: 'SystemCatalog' });
  const system = await post(`/schemes/${systems.id}/systems`, { _type: 'System', label: 'ERP' });
  await post(`/systems/${system.id}/systems`, { _type: 'System', label: 'ERP/Sub' });
  const data = await post('/schemes', { _type: 'Scheme', label: 'Finance Data', modelType: 'DataModel' });
  const line = await post(`/schemes/${data.id}/dataObjects`, { _type: 'DataObject', label: 'Line' });
  const order = await post(`/schemes/${data.id}/dataObjects`, { _type: 'UmlClass', label: 'Order' });
  await post(`/dataObjects/${order.id}/attributes`, { _type: 'UmlAttribute', label: 'qty' });
  await post(`/dataObjects/${order.id}/compositions`, { _type: 'Composition', hasRange: line.id });
  await post(`/schemes/${data.id}/datatypes`, { _type: 'Datatype', label: 'Money' });
  return { scheme, invoices, org };
}

export async function uploadFile(t: TestService, db: string, path: string, text: string | Uint8Array, filename: string, query = '', auth?: Credentials) {
  const form = new FormData();
  form.append('file', new Blob([text as BlobPart]), filename);
  const r = await t.request(`/api/${db}${path}${query ? `?${query}` : ''}`, { method: 'PUT', body: form, auth });
  return { status: r.status, headers: r.headers, body: await r.json() as Json };
}

/** Uploads and waits for the job: its statistics, logs and (when completed) change report. */
export async function uploaded(t: TestService, db: string, path: string, text: string | Uint8Array, filename: string, query = '', auth?: Credentials) {
  const started = await uploadFile(t, db, path, text, filename, query, auth);
  expect(started.status, JSON.stringify(started.body)).to.equal(202);
  const statistics = await finished(t, db, started.body.id, auth);
  const logs = await (await t.request(`/api/${db}/jobs/${started.body.id}/logs`, { auth })).json();
  const report = statistics.status === 'COMPLETED' ? await (await t.request(`/api/${db}/jobs/${started.body.id}/download`, { auth })).json() : undefined;
  return { id: started.body.id as string, location: started.headers.get('location'), statistics, logs: logs.data as Json[], report };
}

export async function downloaded(t: TestService, db: string, path: string, query = 'format=JSON', auth?: Credentials) {
  const r = await t.request(`/api/${db}${path}${query ? `?${query}` : ''}`, { auth });
  const bytes = Buffer.from(await r.arrayBuffer());
  return { status: r.status, headers: r.headers, text: bytes.toString('utf8'), bytes };
}
