/**
 * Where a refused statement went wrong (the synchronous call's 400
 * `{message, position}`): the sandbox's parser and check and the database
 * each place an error, the database within the statement the service
 * composed around the caller's; the answer's position is always within the
 * caller's own text (1-based, characters as PostgreSQL counts them), or
 * absent.
 */
import { expect } from 'chai';
import { startService, type TestService } from '../../helpers/service.ts';
import { queryFixture, refusal, type QueryFixture } from './fixtures.ts';

/** The 1-based character position of the first `word` in `sql` (code points, not UTF-16 units). */
function positionOf(sql: string, word: string): number {
  const at = sql.indexOf(word);
  if (at < 0) throw new Error(`${word} is not in ${sql}`);
  return Array.from(sql.slice(0, at)).length + 1;
}

describe('Query interface: the position of an error in the statement', () => {
  let t: TestService;
  let f: QueryFixture;

  before(async () => {
    t = await startService();
    f = await queryFixture(t);
  });
  after(() => t?.close());

  const at = async (sql: string) => refusal(t, f.db, sql, { auth: f.admin });

  it('places a syntax error where the parser stopped, in characters', async () => {
    for (const sql of [
      'select label, from scheme_view',
      `select 'ä😀' as a,\n  label, from scheme_view`,
      '  -- a comment first\n  select label, from scheme_view',
    ]) {
      const r = await at(sql);
      expect(r.message, sql).to.equal('The statement cannot be parsed (syntax error at or near "from").');
      expect(r.position, sql).to.equal(positionOf(sql, 'from'));
    }
    // Ended too early: one past the last character, as PostgreSQL places it.
    const early = 'select label from scheme_view where';
    expect((await at(early)).position).to.equal(Array.from(early).length + 1);
  });

  it('places the database\'s errors in the caller\'s statement, not in the statement the service wrapped around it', async () => {
    const cases: [string, string, RegExp][] = [
      ['select label, nosuch from scheme_view', 'nosuch', /^column "nosuch" does not exist$/],
      [`select 'ä😀' as a, nosuch from scheme_view`, 'nosuch', /^column "nosuch" does not exist$/],
      ['\n\n  /* first */ select label\n  from scheme_view\n  where label + 1 > 0;  -- after', '+', /^operator does not exist: text \+ integer/],
      // The schema named as SERVICE_QUERY_SCHEMA runs as the database's own (a longer name): positions after it still count the caller's text.
      ['select s.label from service.scheme_view s where s.nosuch = 1', 's.nosuch', /^column s\.nosuch does not exist$/],
      ['select x.label from service.scheme_view x, service.scheme_view y where y.label = x.nosuch', 'x.nosuch', /^column x\.nosuch does not exist$/],
    ];
    for (const [sql, word, message] of cases) {
      const r = await at(sql);
      expect(r.message, sql).to.match(message);
      expect(r.position, sql).to.equal(positionOf(sql, word));
    }
  });

  it('places a refusal of the sandbox at the node it refused', async () => {
    const cases: [string, string][] = [
      ['select label from scheme_view, objects', 'objects'],
      ['select label, pg_sleep(1) from scheme_view', 'pg_sleep'],
      ['select label from scheme_view where label = $1', '$1'],
      // A cast is placed at its `::`, as PostgreSQL places it.
      ['select label::regclass from scheme_view', '::regclass'],
      ['select label from scheme_view; delete from objects', 'delete'],
      ['select * into copied from scheme_view', 'copied'],
      [`select 'ä😀' as a from public.objects`, 'public.objects'],
    ];
    for (const [sql, word] of cases) {
      const r = await at(sql);
      expect(r.position, `${sql} → ${r.message}`).to.equal(positionOf(sql, word));
    }
    // The message is as it always was.
    expect((await at('select label from scheme_view, objects')).message)
      .to.equal('The name objects is not a view of the query interface; read views such as scheme_view or scheme_version_view.');
  });

  it('gives no position where nobody places the error', async () => {
    for (const sql of ['select 1 / 0 as x', '   ', 'select label from scheme_view for update']) {
      const r = await at(sql);
      expect(r, sql).to.not.have.property('position');
    }
  });
});
