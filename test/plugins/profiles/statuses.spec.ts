/**
 * Statuses come from the workflow (decisions §7.2): the standard ones, plus
 * those a tenant's profile declares with German and English labels and,
 * optionally, the transitions each access level may make. An undeclared
 * status is a 400 naming the allowed ones; `status_label` of the query views
 * and the resolved metamodel show the declared labels.
 */
import { expect } from 'chai';
import { createDatabase, startService, type TestService } from '../../helpers/service.ts';
import { createTenant, createUser, secret, type Credentials } from '../../auth/fixtures.ts';
import { rows } from '../query/fixtures.ts';
import { schemaOf } from '../../../runtime/storage/migrations.ts';
import { lineOf, upload } from './fixtures.ts';
import { STATUS_NAME } from '../../../plugins/profiles/status-rules.ts';
import openapi from '../../../generated/openapi.gen.json' with { type: 'json' };

type Json = Record<string, unknown>;

const STANDARD = 'WORKING, SUBMITTED, ACCEPTED, REJECTED, FINAL, INACTIVE, PUBLISHED, DELETENEW, INTERMINATION, ARCHIVED';

const PROFILE = `# The workflow of the Musterbank
statuses:
  REVIEWDCC:
    label: In Prüfung DCC
    labelEn: Under DCC review
    transitions:
      EDITOR: [WORKING]
      ADMINISTRATOR: [FINAL, ARCHIVED]
  ARCHIVEMETA:
    label: Archiv (Metadaten)
  INTERMINATION2:
  FINAL:
    transitions:
      ADMINISTRATOR: [WORKING, INACTIVE, REVIEWDCC]
Classifier:
  properties:
    status:
      literals:
        REVIEWDCC: { icon: magnifier }
`;

describe('profiles: statuses of the workflow', () => {
  let t: TestService;
  let db: string;
  let editor: Credentials;
  let counter = 0;

  const headersOf = (tenant?: string, language?: string): Record<string, string> => ({
    ...(tenant ? { 'service-tenant': tenant } : {}), ...(language ? { 'accept-language': language } : {}),
  });

  async function send(method: string, path: string, json: unknown, o: { tenant?: string; language?: string; as?: Credentials } = {}): Promise<{ status: number; body: Json }> {
    const r = await t.request(`/rest/${db}${path}`, { method, json, headers: headersOf(o.tenant, o.language), auth: o.as });
    return { status: r.status, body: r.status === 204 ? {} : await r.json() };
  }

  const scheme = async (status: string | undefined, o: { tenant?: string; language?: string; as?: Credentials } = {}) =>
    send('POST', '/schemes', { _type: 'Scheme', label: `Modell ${++counter}`, ...(status ? { status } : {}) }, o);

  function violations(r: { status: number; body: Json }): { path: string; message: string }[] {
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    return r.body.violations as { path: string; message: string }[];
  }

  async function profile(yaml: string, tenant?: string, language?: string) {
    return upload(t, db, 'profile', Buffer.from(yaml), { tenant, filename: 'profile.yaml', language });
  }

  before(async () => {
    t = await startService();
    db = await createDatabase(t);
    await createTenant(t, db, 'Nordlicht');
    editor = { loginId: 'redakteurin', password: secret('redakteurin-passwort-1') };
    await createUser(t, db, { ...editor, accessLevel: 'EDITOR' });
    const r = await profile(PROFILE);
    expect(r.status, await r.clone().text()).to.equal(200);
  });
  after(() => t.close());

  describe('the standard workflow', () => {
    it('accepts DELETENEW, INTERMINATION and ARCHIVED in every tenant', async () => {
      for (const status of ['DELETENEW', 'INTERMINATION', 'ARCHIVED']) {
        const r = await scheme(status, { tenant: 'Nordlicht' });
        expect(r.status, JSON.stringify(r.body)).to.equal(201);
        expect(r.body.status).to.equal(status);
      }
    });

    it('moves an object to DELETENEW with PATCH, as the safe-delete path of integrations does', async () => {
      const created = await scheme(undefined, { tenant: 'Nordlicht' });
      const r = await send('PATCH', `/schemes/${created.body.id}`, { status: 'DELETENEW' }, { tenant: 'Nordlicht' });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.status).to.equal('DELETENEW');
    });
  });

  describe('an undeclared status', () => {
    it('is a 400 on status naming the allowed ones, in English and German', async () => {
      const en = violations(await scheme('REVIEWDCC', { tenant: 'Nordlicht' }));
      expect(en).to.deep.equal([{ path: 'status', message: `The value is not allowed; allowed: ${STANDARD}.` }]);
      const de = violations(await scheme('REVIEWDCC', { tenant: 'Nordlicht', language: 'de' }));
      expect(de).to.deep.equal([{ path: 'status', message: `Der Wert ist nicht erlaubt; erlaubt: ${STANDARD}.` }]);
    });

    it('names the tenant\'s own statuses among the allowed ones where it has some', async () => {
      const r = violations(await scheme('REVIEW_DCC'));
      expect(r).to.deep.equal([{ path: 'status', message: `The value is not allowed; allowed: ${STANDARD}, ARCHIVEMETA, INTERMINATION2, REVIEWDCC.` }]);
    });

    it('is reported together with the other violations of the object', async () => {
      const r = await send('POST', '/schemes', { _type: 'Scheme', label: 42, status: 'ERFUNDEN', farbe: 'rot' }, { tenant: 'Nordlicht' });
      expect(violations(r).map((v) => v.path)).to.deep.equal(['farbe', 'label', 'status']);
    });

    it('is refused whatever its form: case, blanks, non-text, overlong', async () => {
      for (const status of ['reviewdcc', 'REVIEWDCC ', ' FINAL', 'final', 'x'.repeat(5000), 'FINAL\u0000']) {
        expect((await scheme(status)).status, status.slice(0, 20)).to.equal(400);
      }
      for (const status of [1, true, ['FINAL'], { FINAL: true }]) {
        const r = await send('POST', '/schemes', { _type: 'Scheme', label: `Modell ${++counter}`, status });
        expect(r.status, JSON.stringify(status)).to.equal(400);
      }
    });

    it('is refused in a list write, with the item\'s index, and nothing of the list is written', async () => {
      const labels = [`Liste ${++counter}`, `Liste ${++counter}`];
      const r = await send('PUT', '/schemes', [
        { _type: 'Scheme', label: labels[0], status: 'REVIEWDCC' },
        { _type: 'Scheme', label: labels[1], status: 'ERFUNDEN' },
      ], { tenant: 'Nordlicht' });
      expect(violations(r).map((v) => v.path)).to.deep.equal(['0.status', '1.status']);
      expect((await send('GET', `/schemes/${encodeURIComponent(labels[0])}`, undefined, { tenant: 'Nordlicht' })).status).to.equal(404);
    });

    it('is refused on a PATCH of an object of another type too (every type has the status)', async () => {
      const parent = await scheme(undefined, { tenant: 'Nordlicht' });
      const classifier = await send('POST', `/schemes/${parent.body.id}/classifiers`, { _type: 'Classifier', label: 'Kunde' }, { tenant: 'Nordlicht' });
      expect(classifier.status).to.equal(201);
      const r = await send('PATCH', `/classifiers/${classifier.body.id}`, { status: 'ARCHIVEMETA' }, { tenant: 'Nordlicht' });
      expect(violations(r)[0].path).to.equal('status');
    });
  });

  describe('statuses the profile declares', () => {
    it('are accepted for that tenant only', async () => {
      const r = await scheme('REVIEWDCC');
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      expect(r.body.status).to.equal('REVIEWDCC');
      expect((await scheme('ARCHIVEMETA')).status).to.equal(201);
      expect((await scheme('ARCHIVEMETA', { tenant: 'Nordlicht' })).status).to.equal(400);
    });

    it('show their labels in status_label of the query views, in the query\'s language', async () => {
      const created = await scheme('REVIEWDCC');
      const label = created.body.label as string;
      const sql = `select status, status_label from scheme_view where label = '${label}'`;
      expect(await rows(t, db, sql)).to.deep.equal([{ status: 'REVIEWDCC', status_label: 'Under DCC review' }]);
      expect(await rows(t, db, sql, { params: { language: 'de' } })).to.deep.equal([{ status: 'REVIEWDCC', status_label: 'In Prüfung DCC' }]);
      // Only a German label: English falls back to it.
      const archived = await scheme('ARCHIVEMETA');
      expect(await rows(t, db, `select status_label from scheme_view where id = '${archived.body.id}'`)).to.deep.equal([{ status_label: 'Archiv (Metadaten)' }]);
      // Without labels, the name is the label.
      const bare = await scheme('INTERMINATION2');
      for (const language of ['de', 'en']) {
        expect(await rows(t, db, `select status_label from scheme_view where id = '${bare.body.id}'`, { params: { language } })).to.deep.equal([{ status_label: 'INTERMINATION2' }]);
      }
      // Standard statuses keep theirs.
      const deleted = await scheme('DELETENEW');
      expect(await rows(t, db, `select status_label from scheme_view where id = '${deleted.body.id}'`, { params: { language: 'de' } }))
        .to.deep.equal([{ status_label: 'Zur Löschung vorgemerkt' }]);
      expect(await rows(t, db, `select status_label from scheme_version_view where id = '${created.body.id}'`)).to.deep.equal([{ status_label: 'Under DCC review' }]);
    });

    it('are listed with their labels among the literals of status in the metamodel call, for that tenant only', async () => {
      const literalsOf = async (headers: Record<string, string>) => {
        const r = await t.request(`/api/${db}/metamodel`, { headers });
        expect(r.status).to.equal(200);
        const body = await r.json();
        return body.types.Classifier.properties.find((p: Json) => p.name === 'status').literals as Json[];
      };
      const en = await literalsOf({});
      expect(en.map((l) => l.value)).to.deep.equal([...STANDARD.split(', '), 'ARCHIVEMETA', 'INTERMINATION2', 'REVIEWDCC']);
      expect(en.find((l) => l.value === 'INTERMINATION2')!.labels).to.deep.equal({ de: 'INTERMINATION2', en: 'INTERMINATION2' });
      const review = en.find((l) => l.value === 'REVIEWDCC')!;
      expect(review).to.include({ label: 'Under DCC review', icon: 'magnifier' });
      expect(review.labels).to.deep.equal({ de: 'In Prüfung DCC', en: 'Under DCC review' });
      expect((await literalsOf({ 'accept-language': 'de' })).find((l) => l.value === 'REVIEWDCC')!.label).to.equal('In Prüfung DCC');
      const other = await literalsOf({ 'service-tenant': 'Nordlicht' });
      expect(other.map((l) => l.value)).to.deep.equal(STANDARD.split(', '));
      // Not handed on as a setting.
      const r = await t.request(`/api/${db}/metamodel`);
      expect((await r.json()).settings).to.not.have.property('statuses');
    });

    it('stop being accepted when the profile drops them; objects keep theirs and can still be changed otherwise', async () => {
      await profile('statuses:\n  ZWISCHEN: { label: Zwischenstand }\n', 'Nordlicht');
      const kept = await scheme('ZWISCHEN', { tenant: 'Nordlicht' });
      expect(kept.status).to.equal(201);
      expect((await profile('{}\n', 'Nordlicht')).status).to.equal(200);
      expect((await scheme('ZWISCHEN', { tenant: 'Nordlicht' })).status).to.equal(400);
      const patched = await send('PATCH', `/schemes/${kept.body.id}`, { title: 'Neu' }, { tenant: 'Nordlicht' });
      expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
      expect(patched.body.status).to.equal('ZWISCHEN');
      // Sending it again is refused, as for a custom property dropped later.
      expect((await send('PUT', `/schemes/${kept.body.id}`, { _type: 'Scheme', label: kept.body.label, status: 'ZWISCHEN' }, { tenant: 'Nordlicht' })).status).to.equal(400);
      // Its label is gone from the views with the declaration.
      const labelled = await rows(t, db, `select status_label from scheme_view where id = '${kept.body.id}'`, { headers: { 'service-tenant': 'Nordlicht' } });
      expect(labelled).to.deep.equal([{ status_label: null }]);
    });
  });

  describe('transitions', () => {
    it('are refused for an access level the profile does not allow, with a 400 naming the allowed ones', async () => {
      const created = await scheme('REVIEWDCC');
      const id = created.body.id;
      const refused = await send('PATCH', `/schemes/${id}`, { status: 'FINAL' }, { as: editor });
      expect(violations(refused)).to.deep.equal([{ path: 'status', message: 'The status cannot change from REVIEWDCC to FINAL with the access level EDITOR; allowed from REVIEWDCC: WORKING.' }]);
      const de = await send('PATCH', `/schemes/${id}`, { status: 'FINAL' }, { as: editor, language: 'de' });
      expect(violations(de)[0].message).to.equal('Der Status kann mit der Zugriffsstufe EDITOR nicht von REVIEWDCC zu FINAL wechseln; erlaubt von REVIEWDCC: WORKING.');
      expect((await send('GET', `/schemes/${id}`, undefined)).body.status).to.equal('REVIEWDCC');
    });

    it('are allowed for the level named and every level above it', async () => {
      const a = await scheme('REVIEWDCC');
      expect((await send('PATCH', `/schemes/${a.body.id}`, { status: 'WORKING' }, { as: editor })).status).to.equal(200);
      const b = await scheme('REVIEWDCC');
      // The administrator may do what the editor may, and more.
      expect((await send('PATCH', `/schemes/${b.body.id}`, { status: 'WORKING' })).status).to.equal(200);
      const c = await scheme('REVIEWDCC');
      expect((await send('PATCH', `/schemes/${c.body.id}`, { status: 'FINAL' })).status).to.equal(200);
      // From FINAL only an administrator may move, and only where the profile says.
      expect((await send('PATCH', `/schemes/${c.body.id}`, { status: 'WORKING' }, { as: editor })).status).to.equal(400);
      expect((await send('PATCH', `/schemes/${c.body.id}`, { status: 'PUBLISHED' })).status).to.equal(400);
      expect((await send('PATCH', `/schemes/${c.body.id}`, { status: 'REVIEWDCC' })).status).to.equal(200);
    });

    it('restrict only changes: creating in any status, writing the same status again, and moving from a status without transitions are free', async () => {
      const created = await scheme('FINAL', { as: editor });
      expect(created.status).to.equal(201);
      const again = await send('PUT', `/schemes/${created.body.id}`, { _type: 'Scheme', label: created.body.label, status: 'FINAL', title: 'neu' }, { as: editor });
      expect(again.status, JSON.stringify(again.body)).to.equal(200);
      const free = await scheme('WORKING', { as: editor });
      expect((await send('PATCH', `/schemes/${free.body.id}`, { status: 'ARCHIVEMETA' }, { as: editor })).status).to.equal(200);
    });

    it('cannot be got round with a list write', async () => {
      const parent = await scheme(undefined);
      const child = await send('POST', `/schemes/${parent.body.id}/classifiers`, { _type: 'Classifier', label: 'Konto', status: 'REVIEWDCC' });
      expect(child.status).to.equal(201);
      const r = await send('PUT', `/schemes/${parent.body.id}/classifiers`, [{ _type: 'Classifier', label: 'Konto', status: 'FINAL' }], { as: editor });
      expect(violations(r).map((v) => v.path)).to.deep.equal(['0.status']);
      expect((await send('GET', `/classifiers/${child.body.id}`, undefined)).body.status).to.equal('REVIEWDCC');
    });

    it('apply to a PUT that leaves the status out (it falls back to WORKING)', async () => {
      const c = await scheme('FINAL');
      const r = await send('PUT', `/schemes/${c.body.id}`, { _type: 'Scheme', label: c.body.label }, { as: editor });
      expect(violations(r)[0].path).to.equal('status');
    });
  });

  describe('the OpenAPI document', () => {
    it('describes a status as a name of the pattern the profiles accept, with the standard ones as examples', () => {
      const schemas = (openapi as unknown as { components: { schemas: Record<string, { properties: Record<string, Json> }> } }).components.schemas;
      const read = schemas.Scheme.properties.status;
      expect(read).to.include({ type: 'string', pattern: STATUS_NAME.source });
      expect(read.examples).to.deep.equal(STANDARD.split(', '));
      expect(read).to.not.have.property('enum');
    });
  });

  describe('uploads', () => {
    async function refusal(yaml: string, language?: string): Promise<{ path: string; message: string }[]> {
      const r = await profile(yaml, 'Nordlicht', language);
      const text = await r.text();
      expect(r.status, text).to.equal(400);
      return JSON.parse(text).violations;
    }

    it('refuses a bad shape with line and column', async () => {
      const yaml = [
        'statuses:',
        '  1BAD: { label: x }',
        '  GOOD:',
        '    label: 7',
        '    transitions:',
        '      EDITOR: WORKING',
        '      CHEF: [WORKING]',
        '      ADMINISTRATOR: [WORKING, NIRGENDS]',
        '  FINAL: { label: Endgültig }',
        '  LISTE: [a, b]',
        '',
      ].join('\n');
      const found = await refusal(yaml);
      expect(found.map((v) => v.path)).to.deep.equal([
        'statuses.1BAD', 'statuses.GOOD.label', 'statuses.GOOD.transitions.EDITOR', 'statuses.GOOD.transitions.CHEF',
        'statuses.GOOD.transitions.ADMINISTRATOR.1', 'statuses.FINAL.label', 'statuses.LISTE',
      ]);
      expect(found[0].message).to.equal(`Line ${lineOf(yaml, '1BAD')}, column 3: 1BAD is not a valid status name (letters, digits and _, starting with a letter, at most 100 characters).`);
      expect(found[3].message).to.equal('Line 7, column 7: CHEF is not an access level; allowed: READ_ONLY, EDITOR, ADMINISTRATOR.');
      expect(found[4].message).to.equal(`Line 8, column 32: the status NIRGENDS is neither a standard one nor declared under statuses; allowed: ${STANDARD}, GOOD, LISTE.`);
      const de = await refusal(yaml, 'de');
      expect(de[3].message).to.equal('Zeile 7, Spalte 7: CHEF ist keine Zugriffsstufe; erlaubt: READ_ONLY, EDITOR, ADMINISTRATOR.');
    });

    it('refuses statuses that are not a mapping, and statuses in the annotations', async () => {
      expect((await refusal('statuses: [A, B]\n'))[0].message).to.equal('Line 1, column 11: the value must be a mapping.');
      const r = await upload(t, db, 'annotations', Buffer.from('statuses:\n  A: { label: a }\n'), { tenant: 'Nordlicht' });
      expect(r.status).to.equal(400);
      expect((await r.json()).violations[0].message).to.equal('Line 1, column 1: statuses are declared in the profile, not in the annotations.');
    });

    it('lets the profile label its own statuses as literals of status, and no others', async () => {
      expect((await profile('statuses:\n  EIGEN: {}\nScheme:\n  properties:\n    status:\n      literals:\n        EIGEN: { label: Eigen }\n', 'Nordlicht')).status).to.equal(200);
      const found = await refusal('Scheme:\n  properties:\n    status:\n      literals:\n        EIGEN: { label: Eigen }\n');
      expect(found[0].path).to.equal('Scheme.properties.status.literals.EIGEN');
    });

    it('keeps status_labels in step with the profile, and a deleted tenant takes its rows with it', async () => {
      const tenant = (await createTenant(t, db, 'Kurzlebig')) as { id: string };
      const labelsOf = async () => (await t.service.storage.knex.raw(
        `select status, label_de, label_en from "${schemaOf(db)}".status_labels where tenant = ? order by status`, [tenant.id],
      )).rows;
      expect((await profile('statuses:\n  EINS: { label: Eins, labelEn: One }\n  ZWEI: {}\n', 'Kurzlebig')).status).to.equal(200);
      expect(await labelsOf()).to.deep.equal([
        { status: 'EINS', label_de: 'Eins', label_en: 'One' },
        { status: 'ZWEI', label_de: 'ZWEI', label_en: null },
      ]);
      expect((await profile('statuses:\n  DREI: { labelEn: Three }\n', 'Kurzlebig')).status).to.equal(200);
      expect(await labelsOf()).to.deep.equal([{ status: 'DREI', label_de: null, label_en: 'Three' }]);
      expect((await t.request(`/rest/${db}/tenants/Kurzlebig`, { method: 'DELETE' })).status).to.equal(204);
      expect(await labelsOf()).to.deep.equal([]);
    });

    it('leaves the statuses in effect as they were when an upload is refused', async () => {
      expect((await profile('statuses:\n  BLEIBT: { labelEn: Stays }\n', 'Nordlicht')).status).to.equal(200);
      await refusal('statuses:\n  BLEIBT: { labelEn: 1 }\n');
      expect((await scheme('BLEIBT', { tenant: 'Nordlicht' })).status).to.equal(201);
    });
  });
});
