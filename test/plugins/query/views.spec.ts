import { expect } from 'chai';
import { startService, type TestService } from '../../helpers/service.ts';
import { queryFixture, rest, rows, runQuery, type Json, type QueryFixture } from './fixtures.ts';

/** Waits until the clock has passed a time, so that the next change has a later timestamp. */
async function waitPast(ms: number) {
  const wait = ms + 5 - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

describe('Query interface: views, tenants, time and language', () => {
  let t: TestService;
  let f: QueryFixture;
  let travel: Json;
  const times: Record<string, number> = {};

  before(async () => {
    t = await startService();
    f = await queryFixture(t);
    // History of one scheme: created as "Draft" → renamed "Final" → deleted.
    travel = await rest(t, 'POST', `/rest/${f.db}/schemes`, { _type: 'Scheme', label: 'Draft', title: 'first' });
    times.created = travel.dateModified;
    await waitPast(times.created);
    times.renamed = (await rest(t, 'PATCH', `/rest/${f.db}/schemes/${travel.id}`, { label: 'Final', title: 'second' })).dateModified;
    await waitPast(times.renamed);
    await rest(t, 'DELETE', `/rest/${f.db}/schemes/${travel.id}`, undefined, {}, 204);
    times.deleted = Date.now();
    await waitPast(times.deleted);
  });
  after(() => t?.close());

  const labels = async (sql: string, options = {}) => (await rows(t, f.db, sql, options)).map((r) => r.label);

  describe('tenants', () => {
    it('shows a tenant administrator the rows of the login tenant only', async () => {
      expect(await labels('select label from scheme_view order by label', { auth: f.admin })).to.deep.equal(['Orders']);
      expect(await labels('select label from scheme_view order by label', { auth: f.otherAdmin })).to.deep.equal(['Secret']);
    });

    it('names each row\'s type as the REST interface does, in `_type` (decisions §7.4)', async () => {
      const found = await rows(t, f.db, 'select _type, label from asset_view where _type = \'Scheme\' order by label', { auth: f.admin });
      expect(found).to.deep.equal([{ _type: 'Scheme', label: 'Orders' }]);
      expect((await rows(t, f.db, 'select _type, count(*) as n from tenant_view group by _type'))).to.deep.equal([{ _type: 'Tenant', n: 2 }]);
    });

    it('shows a system administrator every tenant of the database', async () => {
      expect(await labels('select label from scheme_view order by label')).to.deep.equal(['Orders', 'Secret']);
      expect(await labels('select label from tenant_view order by label')).to.deep.equal(['Default', 'Other']);
    });

    it('returns nothing of another tenant, however the statement asks for it', async () => {
      const other = f.otherTenant;
      for (const sql of [
        `select label from scheme_view where tenant = '${other}'`,
        `select label from scheme_version_view where tenant = '${other}'`,
        `select label from asset_view where tenant = '${other}'`,
        `select label from tenant_view where id = '${other}'`,
        `select login_id as label from user_view where tenant = '${other}'`,
        `select name as label from customproperties_view where resource_id = '${f.otherScheme.id}'`,
        `select label from scheme_view where label = 'Secret'`,
        `select label from scheme_version_view where id = '${f.otherScheme.id}'`,
      ]) {
        expect(await labels(sql, { auth: f.admin }), sql).to.deep.equal([]);
      }
      expect(await labels(`select label from scheme_view where id = '${f.otherScheme.id}' or true`, { auth: f.admin })).to.deep.equal(['Orders']);
      expect(await labels('select label from tenant_view', { auth: f.admin })).to.deep.equal(['Default']);
      const users = await rows(t, f.db, 'select login_id from user_view order by login_id', { auth: f.admin });
      expect(users.map((u) => u.login_id)).to.deep.equal(['ada', 'eddie', 'rita']);
    });

    it('lets an error in a condition reveal nothing of another tenant', async () => {
      // Division by zero only on the other tenant's row: the tenant filter runs first, so no error.
      const probe = `select label from scheme_view where 1 / (case when label = 'Secret' then 0 else 1 end) = 1`;
      expect(await labels(probe, { auth: f.admin })).to.deep.equal(['Orders']);
    });
  });

  describe('time travel', () => {
    const at = (version: number) => ({ params: { version: String(version) } });
    const travelSql = () => `select label, title from scheme_version_view where id = '${travel.id}'`;

    it('shows the versioned views as of the version parameter, without naming the time in the statement', async () => {
      expect(await rows(t, f.db, travelSql(), at(times.renamed - 1))).to.deep.equal([{ label: 'Draft', title: 'first' }]);
      expect(await rows(t, f.db, travelSql(), at(times.renamed))).to.deep.equal([{ label: 'Final', title: 'second' }]);
      expect(await rows(t, f.db, travelSql(), at(times.deleted))).to.deep.equal([]);
      expect(await rows(t, f.db, travelSql(), at(times.created - 1000))).to.deep.equal([]);
    });

    it('shows now when no version is given, and the current views ignore the version', async () => {
      expect(await rows(t, f.db, travelSql())).to.deep.equal([]);
      expect(await labels('select label from scheme_view order by label', at(times.renamed))).to.deep.equal(['Orders', 'Secret']);
    });

    it('takes Accept-Version, and the query parameter over it', async () => {
      expect(await rows(t, f.db, travelSql(), { headers: { 'Accept-Version': String(times.renamed - 1) } })).to.deep.equal([{ label: 'Draft', title: 'first' }]);
      expect(await rows(t, f.db, travelSql(), { ...at(times.renamed), headers: { 'Accept-Version': String(times.renamed - 1) } }))
        .to.deep.equal([{ label: 'Final', title: 'second' }]);
    });

    it('refuses a version that is not epoch milliseconds', async () => {
      for (const version of ['yesterday', '-1', '1.5', '99999999999999999']) {
        const r = await runQuery(t, f.db, 'select 1', { params: { version } });
        expect(r.status, version).to.equal(400);
        expect((await r.json()).message).to.match(/version/);
      }
      const r = await runQuery(t, f.db, 'select 1', { headers: { 'Accept-Version': 'soon' } });
      expect(r.status).to.equal(400);
    });
  });

  describe('language', () => {
    const statusLabel = async (options: object) => (await rows(t, f.db, `select status_label from scheme_view where label = 'Orders'`, options))[0].status_label;

    it('writes status_label in the language of the language parameter or Accept-Language, the parameter winning', async () => {
      expect(await statusLabel({})).to.equal('Working');
      expect(await statusLabel({ params: { language: 'de' } })).to.equal('In Bearbeitung');
      expect(await statusLabel({ headers: { 'Accept-Language': 'de-DE,de;q=0.9' } })).to.equal('In Bearbeitung');
      expect(await statusLabel({ params: { language: 'en' }, headers: { 'Accept-Language': 'de' } })).to.equal('Working');
    });

    it('refuses a language it does not speak', async () => {
      const r = await runQuery(t, f.db, 'select 1', { params: { language: 'fr' } });
      expect(r.status).to.equal(400);
      expect((await r.json()).message).to.match(/language/);
    });
  });
});
