/**
 * The statement forms real reports use (decisions §7.4): set-returning
 * functions of the allow-list in FROM, NOT IN, ANY/ALL, window functions,
 * FILTER, LATERAL, and views named with SERVICE_QUERY_SCHEMA. Each runs on
 * the database and gives the rows it should; the attacks on these forms are
 * in sandbox.spec.ts.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect } from 'chai';
import { parse } from 'libpg-query';
import { startService, type TestService } from '../../helpers/service.ts';
import { POSITION_FIELDS, withoutLocations } from '../../../plugins/query/sandbox.ts';
import { finished, queryFixture, refused, rest, rows, type Json, type QueryFixture } from './fixtures.ts';

/** The default tenant's data besides the fixture's: two schemes, five classifiers, two attributes. */
async function reportData(t: TestService, f: QueryFixture) {
  const post = (path: string, json: Json) => rest(t, 'POST', `/rest/${f.db}/${path}`, json);
  for (const label of ['Order', 'Line']) await post('schemes/Orders/classifiers', { _type: 'Classifier', label });
  await post('schemes', { _type: 'Scheme', label: 'Billing' });
  for (const label of ['Invoice', 'Payment']) await post('schemes/Billing/classifiers', { _type: 'Classifier', label });
  for (const label of ['number', 'name']) await post('schemes/Orders/classifiers/Customer/attributes', { _type: 'BusinessAttribute', label });
}

describe('Query interface: the forms reports use', () => {
  let t: TestService;
  let f: QueryFixture;

  before(async () => {
    t = await startService();
    f = await queryFixture(t);
    await reportData(t, f);
  });
  after(() => t?.close());

  /** The rows a tenant administrator of the default tenant reads. */
  const read = (sql: string) => rows(t, f.db, sql, { auth: f.admin });

  async function expectRows(cases: [string, Json[]][]) {
    for (const [sql, expected] of cases) expect(await read(sql), sql).to.deep.equal(expected);
  }

  it('compares an embedded statement without any of the parser\'s source positions', async () => {
    // Every field the parse tree's own declaration gives a byte offset or length: a new one would make every
    // statement that holds it "change when embedded" (refused, never passed), as list_start did to ARRAY[…].
    const require = createRequire(createRequire(import.meta.url).resolve('libpg-query'));
    const declarations = readFileSync(require.resolve('@pgsql/types/types.d.ts'), 'utf8');
    const offsets = new Set<string>();
    for (const block of declarations.split(/^export interface /m).slice(1)) {
      if (block.startsWith('ScanToken ')) continue; // the scanner's tokens, not the tree
      for (const [, name] of block.matchAll(/^\s+(\w*(?:location|_start|_end|_len)\w*)\?: number;/gm)) offsets.add(name);
    }
    expect([...offsets].sort()).to.include.members(['list_end', 'list_start', 'location', 'rexpr_list_end', 'rexpr_list_start']);
    for (const name of offsets) expect(POSITION_FIELDS.has(name), name).to.equal(true);
    // The same statement further into a text gives the same tree without them, and a different one with them.
    const sql = `select label from scheme_view where label not in ('a', 'b') and id = any(array[gen_random_uuid()])`;
    const tree = async (text: string) => (await parse(text)).stmts![0].stmt;
    const moved = `select * from (\n${sql}\n) q`;
    const inner = ((await tree(moved)) as Json).SelectStmt.fromClause[0].RangeSubselect.subquery;
    expect(withoutLocations(inner)).to.deep.equal(withoutLocations(await tree(sql)));
    expect(JSON.stringify(inner)).to.match(/rexpr_list_start/).and.match(/list_start/);
  });

  it('runs NOT IN, IN and NOT IN over a subquery', async () => {
    await expectRows([
      [`select label from classifier_view where label not in ('Customer', 'Line') order by label`, [{ label: 'Invoice' }, { label: 'Order' }, { label: 'Payment' }]],
      [`select label from classifier_view where label in ('Line', 'Order') order by label`, [{ label: 'Line' }, { label: 'Order' }]],
      [`select label from scheme_view where id not in (select parent_id from classifier_view where label = 'Invoice') order by label`, [{ label: 'Orders' }]],
      [`select label from scheme_view where label not in (select label from scheme_view where label like 'B%')`, [{ label: 'Orders' }]],
    ]);
  });

  it('runs unnest and the other set-returning functions of the allow-list in FROM', async () => {
    await expectRows([
      [`select a.label, u from attribute_view a, unnest(array['x','y']) as u order by a.label, u`,
        [{ label: 'name', u: 'x' }, { label: 'name', u: 'y' }, { label: 'number', u: 'x' }, { label: 'number', u: 'y' }]],
      [`select u from attribute_view, unnest(array['x','y']) as u where attribute_view.label = 'name' order by u`, [{ u: 'x' }, { u: 'y' }]],
      ['select * from unnest(array[1,2])', [{ unnest: 1 }, { unnest: 2 }]],
      [`select v, n from unnest(array['a','b']) with ordinality as t(v, n)`, [{ v: 'a', n: 1 }, { v: 'b', n: 2 }]],
      [`select a, b from rows from (unnest(array[1,2]), unnest(array['one'])) as t(a, b)`, [{ a: 1, b: 'one' }, { a: 2, b: null }]],
      [`select k from jsonb_object_keys('{"b":1,"a":2}') k order by k`, [{ k: 'a' }, { k: 'b' }]],
      [`select part from regexp_split_to_table('a,b', ',') as p(part)`, [{ part: 'a' }, { part: 'b' }]],
      [`select s.label, w from scheme_view s, string_to_table(s.label, 'r') w where s.label = 'Orders'`, [{ label: 'Orders', w: 'O' }, { label: 'Orders', w: 'de' }, { label: 'Orders', w: 's' }]],
      [`select e ->> 'x' as x from jsonb_array_elements('[{"x":1},{"x":2}]') e`, [{ x: '1' }, { x: '2' }]],
      [`select c.label from classifier_view c join unnest(array['Line','Invoice']) as wanted(label) using (label) order by c.label`,
        [{ label: 'Invoice' }, { label: 'Line' }]],
    ]);
  });

  it('runs ANY and ALL over arrays and subqueries', async () => {
    await expectRows([
      [`select label from classifier_view where label = any(array['Customer','Invoice']) order by label`, [{ label: 'Customer' }, { label: 'Invoice' }]],
      [`select label from classifier_view where label <> all(array['Customer','Invoice']) order by label`, [{ label: 'Line' }, { label: 'Order' }, { label: 'Payment' }]],
      [`select label from scheme_view where id = any(select parent_id from classifier_view where label = 'Line')`, [{ label: 'Orders' }]],
      [`select label from classifier_view where length(label) >= all(select length(label) from classifier_view)`, [{ label: 'Customer' }]],
      [`select label from classifier_view where label like any(array['C%','P%']) order by label`, [{ label: 'Customer' }, { label: 'Payment' }]],
    ]);
  });

  it('runs window functions: row_number, rank, lag and lead, aggregates over windows', async () => {
    await expectRows([
      [`select c.label, row_number() over (partition by s.label order by c.label) as n
          from classifier_view c join scheme_view s on s.id = c.parent_id order by c.label`,
        [{ label: 'Customer', n: 1 }, { label: 'Invoice', n: 1 }, { label: 'Line', n: 2 }, { label: 'Order', n: 3 }, { label: 'Payment', n: 2 }]],
      [`select label, rank() over (order by length(label)) as r, dense_rank() over (order by length(label)) as d from classifier_view order by r, label`,
        [{ label: 'Line', r: 1, d: 1 }, { label: 'Order', r: 2, d: 2 }, { label: 'Invoice', r: 3, d: 3 }, { label: 'Payment', r: 3, d: 3 }, { label: 'Customer', r: 5, d: 4 }]],
      [`select label, lag(label) over w as prev, lead(label, 1, '-') over w as next from classifier_view window w as (partition by parent_id order by label) order by label`,
        [{ label: 'Customer', prev: null, next: 'Line' }, { label: 'Invoice', prev: null, next: 'Payment' }, { label: 'Line', prev: 'Customer', next: 'Order' },
          { label: 'Order', prev: 'Line', next: '-' }, { label: 'Payment', prev: 'Invoice', next: '-' }]],
      [`select label, count(*) over (partition by parent_id) as siblings,
          sum(length(label)) over (order by label rows between unbounded preceding and current row) as running,
          string_agg(label, ',') over (partition by parent_id order by label desc) as later
          from classifier_view order by label`,
        [{ label: 'Customer', siblings: 3, running: 8, later: 'Order,Line,Customer' }, { label: 'Invoice', siblings: 2, running: 15, later: 'Payment,Invoice' },
          { label: 'Line', siblings: 3, running: 19, later: 'Order,Line' }, { label: 'Order', siblings: 3, running: 24, later: 'Order' },
          { label: 'Payment', siblings: 2, running: 31, later: 'Payment' }]],
      [`select label, first_value(label) over (order by label) as first, ntile(2) over (order by label) as half from classifier_view order by label limit 2`,
        [{ label: 'Customer', first: 'Customer', half: 1 }, { label: 'Invoice', first: 'Customer', half: 1 }]],
    ]);
  });

  it('runs aggregates with FILTER, over groups and over windows', async () => {
    await expectRows([
      [`select count(*) filter (where length(label) > 5) as long, count(*) as all from classifier_view`, [{ long: 3, all: 5 }]],
      [`select array_agg(label order by label) filter (where label < 'J') as early from classifier_view`, [{ early: ['Customer', 'Invoice'] }]],
      [`select percentile_disc(0.5) within group (order by length(label)) filter (where label <> 'Line') as median from classifier_view`, [{ median: 7 }]],
      [`select s.label, count(c.id) filter (where c.label like '%e%') as with_e, count(*) filter (where c.label like 'P%') as p from scheme_view s join classifier_view c on c.parent_id = s.id group by s.label order by s.label`,
        [{ label: 'Billing', with_e: 2, p: 1 }, { label: 'Orders', with_e: 3, p: 0 }]],
      [`select label, count(*) filter (where label < 'M') over (partition by parent_id) as early from classifier_view order by label`,
        [{ label: 'Customer', early: 2 }, { label: 'Invoice', early: 1 }, { label: 'Line', early: 2 }, { label: 'Order', early: 2 }, { label: 'Payment', early: 1 }]],
    ]);
  });

  it('runs LATERAL subqueries and functions over the views', async () => {
    await expectRows([
      [`select s.label, c.n from scheme_view s, lateral (select count(*) as n from classifier_view c where c.parent_id = s.id) c order by s.label`,
        [{ label: 'Billing', n: 2 }, { label: 'Orders', n: 3 }]],
      [`select s.label, c.label as first from scheme_view s left join lateral (select label from classifier_view c where c.parent_id = s.id order by label limit 1) c on true order by s.label`,
        [{ label: 'Billing', first: 'Invoice' }, { label: 'Orders', first: 'Customer' }]],
      [`select s.label, w from scheme_view s cross join lateral regexp_split_to_table(s.label, 'r') as w where s.label = 'Orders'`,
        [{ label: 'Orders', w: 'O' }, { label: 'Orders', w: 'de' }, { label: 'Orders', w: 's' }]],
      [`select a.label, x.n from attribute_view a, lateral (select count(*) as n from attribute_view b where b.has_domain = a.has_domain and b.label <= a.label) x order by a.label`,
        [{ label: 'name', n: 1 }, { label: 'number', n: 2 }]],
    ]);
  });

  it('shows every form nothing of another tenant', async () => {
    const other = (sql: string) => rows(t, f.db, sql, { auth: f.otherAdmin });
    expect(await other(`select s.label, c.n from scheme_view s, lateral (select count(*) as n from classifier_view c where c.parent_id = s.id) c`)).to.deep.equal([{ label: 'Secret', n: 0 }]);
    expect(await other(`select label, row_number() over (order by label) as n from scheme_view where label not in ('x')`)).to.deep.equal([{ label: 'Secret', n: 1 }]);
    expect(await other(`select count(*) filter (where true) as n from service.classifier_view`)).to.deep.equal([{ n: 0 }]);
    expect(await other(`select label from service.scheme_view where label = any(array['Orders','Billing','Secret'])`)).to.deep.equal([{ label: 'Secret' }]);
  });

  describe('views named with SERVICE_QUERY_SCHEMA (default service)', () => {
    it('reads service.<view> as <view>, however the schema\'s name is written', async () => {
      const both = [{ label: 'Billing' }, { label: 'Orders' }];
      await expectRows([
        ['select label from service.scheme_view order by label', both],
        ['select label from SERVICE . scheme_view order by label', both],
        ['select label from "service"/* the schema */.scheme_view order by label', both],
        [`select label from U&"\\0073ervice".scheme_view order by label`, both],
        ['table service.scheme_view', (await read('table scheme_view'))],
        ['select service.scheme_view.label from service.scheme_view order by 1', both],
        ['select service.scheme_view.label from scheme_view order by 1', both],
        ['select s.label, count(*) as n from service.scheme_view s join classifier_view c on c.parent_id = s.id group by s.label order by s.label',
          [{ label: 'Billing', n: 2 }, { label: 'Orders', n: 3 }]],
        [`select label from service.classifier_view where label not in (select label from service.classifier_view where parent_id = any(select id from service.scheme_view where label = 'Orders'))
          order by label`, [{ label: 'Invoice' }, { label: 'Payment' }]],
      ]);
    });

    it('reads the view, not a WITH query of the same name (a name with a schema never names one)', async () => {
      await expectRows([
        [`with scheme_view as (select 'shadow' as label) select label from service.scheme_view order by label`, [{ label: 'Billing' }, { label: 'Orders' }]],
        [`with scheme_view as (select 'shadow' as label) select label from scheme_view`, [{ label: 'shadow' }]],
      ]);
    });

    it('reads versioned views as of the version, and runs as a job', async () => {
      const before = f.scheme.dateCreated - 1;
      expect(await rows(t, f.db, `select label from service.scheme_version_view where id = '${f.scheme.id}'`, { auth: f.admin, params: { version: String(before) } })).to.deep.equal([]);
      expect(await rows(t, f.db, `select label from service.scheme_version_view where id = '${f.scheme.id}'`, { auth: f.admin })).to.deep.equal([{ label: 'Orders' }]);
      const r = await t.request(`/api/${f.db}/queries/download?format=JSON`, { method: 'POST', json: { sql: 'select label from service.scheme_view order by label' }, auth: f.admin });
      expect(r.status).to.equal(200);
      const { id } = await r.json();
      expect((await finished(t, f.db, id, f.admin)).status).to.equal('COMPLETED');
      const download = await t.request(`/api/${f.db}/jobs/${id}/download`, { auth: f.admin });
      expect(await download.json()).to.deep.equal([{ label: 'Billing' }, { label: 'Orders' }]);
    });

    it('refuses every other schema, and this one before anything but a view, saying which schema is allowed', async () => {
      expect(await refused(t, f.db, 'select * from "Service".scheme_view', { auth: f.admin })).to.equal(
        'Names with a schema (Service.scheme_view) cannot be used; name the views without one, or with the schema service (service.scheme_view).');
      expect(await refused(t, f.db, 'select * from public.scheme_view', { auth: f.admin, params: { language: 'de' } })).to.equal(
        'Namen mit Schema (public.scheme_view) können nicht verwendet werden; nennen Sie die Sichten ohne Schema oder mit dem Schema service (service.scheme_view).');
      for (const sql of ['select * from service.objects', 'select * from service.databases', 'with q as (select 1) select * from service.q',
        'select * from x.service.scheme_view', 'select service.lower(label) from scheme_view', `select * from U&"!0073ervice" UESCAPE '!'.scheme_view`]) {
        expect(await refused(t, f.db, sql, { auth: f.admin }), sql).to.match(/^Names with a schema/);
      }
    });
  });
});

describe('Query interface: SERVICE_QUERY_SCHEMA set', () => {
  it('names the views with the configured schema, and refuses service then', async () => {
    const t = await startService({ SERVICE_QUERY_SCHEMA: 'legacy_reports' });
    try {
      const f = await queryFixture(t);
      expect(await rows(t, f.db, 'select label from legacy_reports.scheme_view', { auth: f.admin })).to.deep.equal([{ label: 'Orders' }]);
      expect(await rows(t, f.db, 'select label from LEGACY_REPORTS.scheme_view', { auth: f.admin })).to.deep.equal([{ label: 'Orders' }]);
      expect(await refused(t, f.db, 'select label from service.scheme_view', { auth: f.admin })).to.equal(
        'Names with a schema (service.scheme_view) cannot be used; name the views without one, or with the schema legacy_reports (legacy_reports.scheme_view).');
    } finally {
      await t.close();
    }
  });

  it('refuses at start a schema of PostgreSQL or of the service\'s databases, and a name that is not a lower-case identifier, naming the setting', async () => {
    for (const [value, reason] of [
      ['pg_catalog', /SERVICE_QUERY_SCHEMA: must not name a schema of PostgreSQL/], ['information_schema', /SERVICE_QUERY_SCHEMA: must not name a schema of PostgreSQL/],
      ['pg_toast', /SERVICE_QUERY_SCHEMA: must not name a schema of PostgreSQL/], ['db_demo', /SERVICE_QUERY_SCHEMA: must not name a schema of the service's databases/],
      ['Service', /SERVICE_QUERY_SCHEMA/], ['"service"', /SERVICE_QUERY_SCHEMA/], ['service.x', /SERVICE_QUERY_SCHEMA/],
    ] as const) {
      let failure: unknown;
      await startService({ SERVICE_QUERY_SCHEMA: value }).then((s) => s.close(), (err) => { failure = err; });
      expect(String(failure), value).to.match(reason);
    }
  });
});
