import { expect } from 'chai';
import { parse } from 'libpg-query';
import { startService, type TestService } from '../../helpers/service.ts';
import { queryEngineOf } from '../../../plugins/query/index.ts';
import { QueryFailure, type QueryEngine } from '../../../plugins/query/runner.ts';
import { withoutLocations, type CheckedStatement } from '../../../plugins/query/sandbox.ts';
import { schemaOf } from '../../../runtime/storage/migrations.ts';
import { applyViews, readViewsSql } from '../../../runtime/storage/views.ts';
import { EMBEDDED_HOST } from '../../../runtime/storage/connection.ts';
import { RECYCLE_BYTES, type PgliteHost } from '../../../runtime/storage/pglite/host.ts';
import { finished, queryFixture, refused, rows, type QueryFixture } from './fixtures.ts';

/** What a statement could have changed: the tables' contents and the read-only role's rights. */
async function snapshot(t: TestService, db: string) {
  const s = `"${schemaOf(db)}"`;
  const r = await t.service.storage.knex.raw(`select
      (select md5(coalesce(string_agg(o::text, '|' order by o.id), '')) from ${s}.objects o) as objects,
      (select md5(coalesce(string_agg(h::text, '|' order by h.id, h.version), '')) from ${s}.history h) as history,
      (select md5(coalesce(string_agg(c::text, '|' order by c.user_id), '')) from ${s}.credentials c) as credentials,
      (select row(rolsuper, rolcreaterole, rolcreatedb, rolcanlogin, rolbypassrls)::text from pg_roles where rolname = 'service_readonly') as role,
      (select string_agg(table_name || ':' || privilege_type, ',' order by table_name, privilege_type) from information_schema.role_table_grants
         where grantee = 'service_readonly' and table_schema = ?) as grants,
      (select count(*) from pg_largeobject_metadata)::int as large_objects`, [schemaOf(db)]);
  return r.rows[0];
}

describe('Query interface: the sandbox', () => {
  let t: TestService;
  let f: QueryFixture;
  let engine: QueryEngine;
  let before_: Record<string, unknown>;
  let connectionBefore: Record<string, unknown>;

  before(async () => {
    // One pooled connection: every statement below runs on the connection checked at the end.
    t = await startService({ SERVICE_QUERY_POOL_SIZE: '1' });
    f = await queryFixture(t);
    engine = queryEngineOf(t.service.storage)!;
    before_ = await snapshot(t, f.db);
    connectionBefore = await engine.inspect();
  });
  after(() => t?.close());

  const escapes = (): [string, string][] => {
    const other = f.otherTenant;
    const schema = schemaOf(f.db);
    return [
      ['stacked statements', 'select 1; select 2'],
      ['a stacked delete', 'select label from scheme_view; delete from objects'],
      ['COMMIT first', 'commit; select 1'],
      ['ROLLBACK, then SET ROLE', 'rollback; set role postgres; select 1'],
      ['SET ROLE', 'set role postgres'],
      ['RESET ROLE', 'reset role'],
      ['SET SESSION AUTHORIZATION', 'set session authorization postgres'],
      ['set_config of the role', `select set_config('role', 'postgres', true)`],
      ['set_config of the search path', `select set_config('search_path', 'public', true)`],
      ['set_config of the tenants', `select set_config('service.tenants', '${other}', true), label from scheme_view`],
      ['set_config of the version', `select set_config('service.version', '0', true)`],
      ['set_config in a lateral subquery', `select * from scheme_view, lateral (select set_config('service.tenants', '${other}', true)) x`],
      ['SET LOCAL of the tenants', `set local service.tenants = '${other}'`],
      ['SET TRANSACTION READ WRITE', 'set transaction read write'],
      ['BEGIN READ WRITE', 'begin transaction read write'],
      ['a data-modifying WITH (delete)', 'with d as (delete from objects returning id) select * from d'],
      ['a data-modifying WITH (update of a view)', `with u as (update scheme_view set label = 'x' returning 1) select * from u`],
      ['INSERT', 'insert into objects (id) values (gen_random_uuid())'],
      ['SELECT … FOR UPDATE', 'select * from scheme_view for update'],
      ['SELECT … FOR SHARE NOWAIT', 'select * from scheme_view for share nowait'],
      ['nextval', `select nextval('objects_id_seq')`],
      ['DO', 'do $$ begin delete from objects; end $$'],
      ['COPY … TO PROGRAM', `copy (select 1) to program 'touch /tmp/query-escape'`],
      ['COPY of a table', 'copy objects to stdout'],
      ['pg_read_file', `select pg_read_file('/etc/passwd')`],
      ['pg_ls_dir', `select pg_ls_dir('.')`],
      ['lo_import', `select lo_import('/etc/passwd')`],
      ['lo_export', `select lo_export(1, '/tmp/query-escape')`],
      ['dblink', `select * from dblink('dbname=postgres', 'delete from objects') as t(a text)`],
      ['pg_sleep past the timeout', 'select pg_sleep(3600)'],
      ['pg_sleep, schema-qualified', 'select pg_catalog.pg_sleep(1)'],
      ['an advisory lock', 'select pg_advisory_lock(42)'],
      ['a transaction advisory lock', 'select pg_try_advisory_xact_lock(42)'],
      ['pg_terminate_backend', 'select pg_terminate_backend(pg_backend_pid())'],
      ['pg_cancel_backend', 'select pg_cancel_backend(1)'],
      ['query_to_xml over a table', `select query_to_xml('select * from objects', true, false, '')`],
      ['the objects table', 'select * from objects'],
      ['the history table', 'select * from history'],
      ['the credentials table', 'select hash from credentials'],
      ['pg_authid', 'select rolname, rolpassword from pg_authid'],
      ['a catalog, schema-qualified', 'select * from pg_catalog.pg_roles'],
      ['the database\'s schema, qualified', `select * from "${schema}".objects`],
      ['a view, schema-qualified', `select * from "${schema}".scheme_view`],
      ['information_schema', 'select * from information_schema.tables'],
      ['the control schema', 'select * from service.databases'],
      ['a comment hiding a semicolon', 'select 1 /* ; */; delete from objects'],
      ['dollar quoting', 'select $$;$$; delete from objects'],
      ['an E string', `select E'\\''; delete from objects --'`],
      ['a Unicode-escaped name', 'select * from U&"obj\\0065cts"'],
      ['a WITH query shadowing a view', 'with scheme_view as (select 1) select * from history'],
      ['a WITH query named like the table it reads', 'with objects as (select * from objects) select * from objects'],
      ['SELECT INTO', 'select * into stolen from scheme_view'],
      ['current_setting', `select current_setting('service.tenants')`],
      ['a cast to regclass', `select 'objects'::regclass`],
      ['a function called as a column', 'select s.pg_typeof from scheme_view s'],
      ['EXPLAIN ANALYZE', 'explain analyze select 1'],
      ['PREPARE', 'prepare p as select 1'],
      ['pg_notify', `select pg_notify('x', 'y')`],
      ['a parameter', 'select $1'],
      ['a schema-qualified operator', 'select 1 operator(pg_catalog.+) 1'],
      ['generate_series over a billion rows', 'select count(*) from generate_series(1, 1000000000)'],
      ['repeat to a gigabyte', `select repeat('x', 1000000000)`],
      ['txid_current', 'select txid_current()'],
      ['the service\'s own login', 'select session_user'],
      ['the service\'s own database', 'select current_catalog'],
      ['VACUUM', 'vacuum'],
      ['TABLESAMPLE', 'select * from scheme_view tablesample system (50)'],
      ['an XML entity', `select xmlparse(document '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>')`],
      ['leaving the embedding', 'select 1) q; delete from objects; select (1'],
      ['an empty statement', '  '],
      ['a very long statement', `select ${"'x' || ".repeat(20_000)}'x'`],
      ['a deeply nested statement', `select ${'(select '.repeat(300)}1${')'.repeat(300)}`],
      ['a NUL character', 'select 1\u0000; delete from objects'],
      // The forms reports use (decisions §7.4), around what they must not reach.
      ['pg_ls_dir in FROM', `select * from pg_ls_dir('.')`],
      ['pg_read_file in FROM', `select * from scheme_view, pg_read_file('/etc/passwd') f`],
      ['generate_series in FROM beside a view', 'select * from scheme_view, generate_series(1, 1000000000) g'],
      ['dblink in FROM', `select * from scheme_view, dblink('dbname=postgres', 'select 1') as t(a int)`],
      ['a forbidden function in ROWS FROM', `select * from rows from (unnest(array[1]), pg_ls_dir('.')) as t(a, b)`],
      ['a forbidden function WITH ORDINALITY', `select * from pg_ls_dir('.') with ordinality`],
      ['a column definition list (a record of any shape)', `select * from unnest(array[1]) as t(a int)`],
      ['a schema-qualified unnest', 'select * from pg_catalog.unnest(array[1])'],
      ['LATERAL calling pg_read_file', `select * from scheme_view s, lateral pg_read_file('/etc/passwd') f`],
      ['LATERAL calling set_config', `select * from scheme_view s cross join lateral set_config('service.tenants', '${other}', true) x`],
      ['a LATERAL subquery reading a catalog', 'select * from scheme_view s, lateral (select rolname from pg_roles) r'],
      ['a LATERAL subquery reading a table', 'select * from scheme_view s left join lateral (select * from objects o where o.id = s.id) x on true'],
      ['a window function over a forbidden function', 'select sum(pg_backend_pid()) over () from scheme_view'],
      ['a window ordered by a forbidden function', `select row_number() over (order by pg_read_file('/etc/passwd')) from scheme_view`],
      ['a named window partitioned by a forbidden function', `select rank() over w from scheme_view window w as (partition by current_setting('service.tenants'))`],
      ['lag of set_config', `select lag(set_config('service.tenants', '${other}', true)) over () from scheme_view`],
      ['a window function that is not a window function of the allow-list', 'select pg_sleep(1) over () from scheme_view'],
      ['FILTER with set_config', `select count(*) filter (where set_config('service.tenants', '${other}', true) is not null) from scheme_view`],
      ['FILTER with pg_sleep', 'select count(*) filter (where pg_sleep(1) is null) from scheme_view'],
      ['ANY over a catalog', 'select label from scheme_view where label = any(select rolname from pg_roles)'],
      ['NOT IN over a table', 'select label from scheme_view where id not in (select id from objects)'],
      ['ALL over a forbidden function', `select label from scheme_view where label <> all(array[current_setting('role')])`],
      ['service.pg_authid', 'select * from service.pg_authid'],
      ['service.objects', 'select * from service.objects'],
      ['service.credentials', 'select * from service.credentials'],
      ['the control schema in capitals', 'select * from SERVICE.databases'],
      ['a quoted variant of the schema', 'select * from "Service".scheme_view'],
      ['public', 'select * from public.scheme_view'],
      ['pg_catalog before a view name', 'select * from pg_catalog.scheme_view'],
      ['information_schema before a view name', 'select * from information_schema.scheme_view'],
      ['the database\'s schema before a view name, unquoted', `select * from ${schema}.scheme_view`],
      ['a catalog before the schema', 'select * from postgres.service.scheme_view'],
      ['the schema before a WITH query', `with q as (select label from scheme_view) select * from service.q`],
      ['the schema before a function', 'select service.lower(label) from scheme_view'],
      ['the schema before a set-returning function', 'select * from service.unnest(array[1])'],
      ['the schema before a type', 'select label::service.text from scheme_view'],
      // Passes the check (a column of three names may be a row's field) and fails in the database: objects is not in FROM.
      ['the schema before a table\'s column', 'select service.objects.props from scheme_view'],
      ['a Unicode-escaped schema with UESCAPE', `select * from U&"!0073ervice" UESCAPE '!'.scheme_view`],
    ];
  };

  it('refuses at least 110 ways out, each with 400 and a message, none with 500', async () => {
    const list = escapes();
    expect(list.length).to.be.at.least(110);
    for (const [name, sql] of list) {
      const message = await refused(t, f.db, sql, { auth: f.admin });
      expect(message, name).to.not.match(/unexpected/i);
    }
    // As jobs too: the start call still answers with an id, and the job fails.
    const r = await t.request(`/api/${f.db}/queries/download`, { method: 'POST', json: { sql: 'select 1; delete from objects' }, auth: f.admin });
    expect(r.status).to.equal(200);
    const job = await finished(t, f.db, (await r.json()).id, f.admin);
    expect(job.status).to.equal('FAILED');
  });

  it('bounds the memory of a statement that builds a huge value from nothing: 400, and the service goes on', async function () {
    this.timeout(180_000);
    // repeat and lpad are refused; a recursive query that doubles a string is not, and stops only where the database does.
    const sql = `with recursive r(s) as (select 'x'::text union all select s || s from r where length(s) < 700000000) select max(length(s)) as m from r`;
    const message = await refused(t, f.db, sql, { auth: f.admin, params: { statementTimeout: '120000' } });
    expect(message).to.match(/out of memory|memory alloc/);
    expect(await rows(t, f.db, 'select label from scheme_view', { auth: f.admin })).to.deep.equal([{ label: 'Orders' }]);
    const host = (t.service.storage as unknown as Record<symbol, PgliteHost | undefined>)[EMBEDDED_HOST];
    // Embedded: the statement ran on a copy of the database, whose memory grew to the limit of WebAssembly and does not
    // shrink; the copy was reopened to give it back. The database itself never grew.
    if (host) {
      expect(host.lastMemoryBytes).to.be.above(0).and.below(RECYCLE_BYTES);
      const copies = queryEngineOf(t.service.storage)!.snapshotReaders!.memoryBytes();
      expect(copies.length).to.be.above(0);
      for (const bytes of copies) expect(bytes).to.be.below(RECYCLE_BYTES);
    }
  });

  it('says why a statement was refused', async () => {
    expect(await refused(t, f.db, 'select * from objects')).to.equal('The name objects is not a view of the query interface; read views such as scheme_view or scheme_version_view.');
    expect(await refused(t, f.db, 'select pg_sleep(1)')).to.equal('The function pg_sleep cannot be called.');
    expect(await refused(t, f.db, 'select 1; select 2')).to.equal('Exactly one statement is allowed; this text holds 2.');
    expect(await refused(t, f.db, 'delete from objects')).to.equal('Only a SELECT statement (WITH, UNION and VALUES included) can be run, not a DELETE statement.');
    expect(await refused(t, f.db, 'select * from scheme_view for update', { params: { language: 'de' } })).to.equal('Sperrklauseln (FOR UPDATE, FOR SHARE …) können nicht ausgeführt werden.');
    expect(await refused(t, f.db, 'selec 1')).to.match(/^The statement cannot be parsed \(syntax error at or near "selec"/);
  });

  it('runs statements that only look like tricks, as the plain reads they are', async () => {
    const cases: [string, Record<string, unknown>[]][] = [
      ['select label from scheme_view -- ) q; delete from objects', [{ label: 'Orders' }]],
      [`select label from scheme_view /* ) q; delete from objects; -- */`, [{ label: 'Orders' }]],
      [`select 'x; delete from objects' as t;`, [{ t: 'x; delete from objects' }]],
      ['select $$;$$ as t', [{ t: ';' }]],
      [`select E'\\'; delete' as t`, [{ t: "'; delete" }]],
      [`select U&'d\\0061t\\+000061' as t`, [{ t: 'data' }]],
      [`with scheme_view as (select 'shadow' as label) select label from scheme_view`, [{ label: 'shadow' }]],
      [`with recursive r(n) as (select 1 union all select n + 1 from r where n < 3) select n from r`, [{ n: 1 }, { n: 2 }, { n: 3 }]],
      [`select label from scheme_view union all select label from scheme_version_view`, [{ label: 'Orders' }, { label: 'Orders' }]],
      [`values (1, 'one')`, [{ column1: 1, column2: 'one' }]],
      [`table tenant_view`, (await rows(t, f.db, 'select * from tenant_view', { auth: f.admin }))],
      [`select extract(year from date_created) > 2000 as recent, trim(both ' ' from ' x ') as x from scheme_view`, [{ recent: true, x: 'x' }]],
    ];
    for (const [sql, expected] of cases) expect(await rows(t, f.db, sql, { auth: f.admin }), sql).to.deep.equal(expected);
  });

  it('grants the views again after they were recreated', async () => {
    const count = `select count(*) as n from scheme_view`;
    expect(await rows(t, f.db, count, { auth: f.admin })).to.deep.equal([{ n: 1 }]);
    // Recreated views have lost their grants: the read-only role may read nothing.
    await applyViews(t.service.storage.knex, f.db, readViewsSql(t.service.config.generatedDir));
    const message = await refused(t, f.db, count, { auth: f.admin });
    expect(message).to.match(/permission denied/);
    // What a start (or a new metamodel's views) runs afterwards grants them again.
    await t.service.databases.upgradeAll();
    expect(await rows(t, f.db, count, { auth: f.admin })).to.deep.equal([{ n: 1 }]);
    expect(await snapshot(t, f.db)).to.deep.equal(before_);
  });

  describe('beneath the statement check', () => {
    /** A statement as if it had passed the check: what the database alone does with it (its CSV, or the error). */
    async function forged(text: string): Promise<unknown> {
      const parsed = await parse(text);
      const statement: CheckedStatement = { text, tree: withoutLocations(parsed.stmts![0].stmt) };
      try {
        const result = await engine.run({ db: f.db, statement, format: 'CSV', tenant: f.defaultTenant, version: null, language: 'en', timeoutMs: 5000 });
        const chunks: Buffer[] = [];
        for await (const chunk of result.stream) chunks.push(chunk as Buffer);
        return Buffer.concat(chunks).toString('utf8');
      } catch (err) {
        return err;
      }
    }

    it('keeps the read-only role away from the tables, the catalogs with secrets and the server\'s files', async () => {
      for (const sql of [
        'select * from objects', 'select * from history', 'select * from credentials', 'select * from service.databases',
        'select * from service.admin_credentials', 'select rolpassword from pg_authid', `select pg_read_file('/etc/passwd')`,
        `select lo_import('/etc/passwd')`, `select query_to_xml('select * from objects', true, false, '')`,
      ]) {
        const err = await forged(sql);
        expect(err, sql).to.be.instanceOf(QueryFailure);
        expect((err as QueryFailure).message, sql).to.match(/permission denied|must be superuser/);
      }
    });

    it('runs every statement as the read-only role, in a read-only transaction, with the settings of the caller', async () => {
      const csv = await forged(`select current_user as role, current_setting('transaction_read_only') as read_only,
        current_setting('search_path') as path, current_setting('service.tenants') as tenants, current_setting('transaction_isolation') as isolation`);
      const path = `"""${schemaOf(f.db)}"""`;
      expect(csv).to.equal(`role,read_only,path,tenants,isolation\r\nservice_readonly,on,${path},${f.defaultTenant},repeatable read\r\n`);
      expect(await snapshot(t, f.db)).to.deep.equal(before_);
    });

    it('refuses a composed statement that the caller\'s text would change', async () => {
      // The text does not match the tree it claims to be: the embedding check refuses it before the database sees it.
      const statement: CheckedStatement = { text: 'select 1) q; select (1', tree: withoutLocations((await parse('select 1')).stmts![0].stmt) };
      let error: unknown;
      try {
        await engine.run({ db: f.db, statement, format: 'CSV', tenant: f.defaultTenant, version: null, language: 'en', timeoutMs: 0 });
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(QueryFailure);
      expect((error as Error).message).to.match(/cannot be run/);
    });
  });

  // Last: mocha runs a suite's own tests before its nested suites, and the statements beneath the check above
  // are the ones that reach the database and fail there.
  describe('after every statement above', () => {
    it('leaves the data, the role and the pooled connection as they were', async () => {
      expect(await snapshot(t, f.db)).to.deep.equal(before_);
      const grants = String(before_.grants).split(',');
      expect(grants.length).to.be.greaterThan(10);
      for (const grant of grants) expect(grant).to.match(/^[a-z_]+_view:SELECT$/);
      expect(before_.role).to.equal('(f,f,f,f,f)');
      const connection = await engine.inspect();
      expect(connection).to.deep.equal(connectionBefore);
      expect(connection).to.include({ tenants: '', version: '', language: '', readOnly: 'off', statementTimeout: '0', advisoryLocks: 0, otherLocks: 0 });
      expect(connection.currentUser).to.equal(connection.sessionUser);
    });
  });
});
