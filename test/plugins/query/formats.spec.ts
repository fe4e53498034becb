import { expect } from 'chai';
import { create } from 'xmlbuilder2';
import { startService, type TestService } from '../../helpers/service.ts';
import { queryEngineOf } from '../../../plugins/query/index.ts';
import { xmlName, csvLine, CsvRecordEnds, uniqueNames, copyRows, validXml, validXmlBytes } from '../../../plugins/query/formats.ts';
import { checkStatement } from '../../../plugins/query/sandbox.ts';
import { queryFixture, runQuery, type QueryFixture } from './fixtures.ts';

/** One row of every kind of value the formats treat apart. */
const KINDS = `select * from (values (
    1, 'plain', true, false, timestamp '2024-01-02 03:04:05.6', timestamptz '2024-01-02 03:04:05.678+02', ''::text, null::text,
    'a,b', 'say "hi"', E'two\\nlines', 12345678901234567::bigint, 1.10::numeric, 0.1::float8, date '2024-02-29',
    '{"a": [1, 2]}'::jsonb, E'back\\\\slash', 'x < y & z'
  )) v(n, plain, yes, no, ts, tstz, empty, nothing, comma, quote, newline, big, num, flt, day, doc, backslash, markup)`;

const rowsOf = (n: number) => `with recursive r(n) as (select 1 union all select n + 1 from r where n < ${n}) select n, 'row ' || n as label from r`;

describe('Query interface: result formats', () => {
  let t: TestService;
  let f: QueryFixture;
  before(async () => {
    t = await startService();
    f = await queryFixture(t);
  });
  after(() => t?.close());

  async function download(sql: string, format?: string) {
    const r = await runQuery(t, f.db, sql, { format });
    const text = await r.text();
    expect(r.status, text).to.equal(200);
    return { r, text };
  }

  describe('CSV', () => {
    it('writes a header row, RFC 4180 quoting, timestamps in UTC without zone, true/false and null as empty', async () => {
      const { r, text } = await download(KINDS, 'CSV');
      expect(r.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
      expect(r.headers.get('content-disposition')).to.equal('attachment; filename="Query.csv"');
      expect(text).to.equal(
        'n,plain,yes,no,ts,tstz,empty,nothing,comma,quote,newline,big,num,flt,day,doc,backslash,markup\r\n'
        + '1,plain,true,false,2024-01-02T03:04:05.600,2024-01-02T01:04:05.678,"",,"a,b","say ""hi""","two\nlines",'
        + '12345678901234567,1.10,0.1,2024-02-29,"{""a"": [1, 2]}",back\\slash,x < y & z\r\n',
      );
    });

    it('is the format when none is asked for, and the format name may be written in any case', async () => {
      const { r, text } = await download(`select label from scheme_view where label = 'Orders'`);
      expect(r.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
      expect(text).to.equal('label\r\nOrders\r\n');
      expect((await download(`select 1 as one`, 'json')).text).to.equal('[\n{"one":1}\n]\n');
    });

    it('writes the header alone for an empty result, and repeated column names as they are', async () => {
      expect((await download(`select label from scheme_view where false`, 'CSV')).text).to.equal('label\r\n');
      expect((await download(`select 1 as a, 2 as a, 3`, 'CSV')).text).to.equal('a,a,?column?\r\n1,2,3\r\n');
    });

    it('writes the same bytes whether rows stream out of COPY or are fetched from a cursor', async function () {
      const engine = queryEngineOf(t.service.storage)!;
      if (engine.kind !== 'postgres') this.skip(); // embedded: the cursor is the only way
      const views = new Set(['scheme_view']);
      for (const format of ['CSV', 'JSON', 'XML'] as const) {
        for (const sql of [KINDS, rowsOf(3000), 'select 1 as a, 2 as a, null as "?column?"']) {
          const statement = await checkStatement(sql, views);
          const spec = { db: f.db, statement, format, tenant: null, version: null, language: 'en' as const, timeoutMs: 0 };
          const read = async (via: 'copy' | 'cursor') => {
            const chunks: Buffer[] = [];
            for await (const chunk of (await engine.run(spec, { via })).stream) chunks.push(chunk as Buffer);
            return Buffer.concat(chunks).toString('utf8');
          };
          expect(await read('cursor'), `${format}: ${sql}`).to.equal(await read('copy'));
        }
      }
    });
  });

  describe('JSON', () => {
    it('writes an array of row objects: numbers as numbers with every digit, booleans, null, nested JSON, timestamps as in CSV', async () => {
      const { r, text } = await download(KINDS, 'JSON');
      expect(r.headers.get('content-type')).to.equal('application/json; charset=utf-8');
      expect(text).to.include('"big":12345678901234567,').and.include('"num":1.10,').and.include('"flt":0.1,');
      expect(JSON.parse(text)).to.deep.equal([{
        n: 1, plain: 'plain', yes: true, no: false, ts: '2024-01-02T03:04:05.600', tstz: '2024-01-02T01:04:05.678', empty: '', nothing: null,
        comma: 'a,b', quote: 'say "hi"', newline: 'two\nlines', big: 12345678901234567, num: 1.1, flt: 0.1, day: '2024-02-29',
        doc: { a: [1, 2] }, backslash: 'back\\slash', markup: 'x < y & z',
      }]);
    });

    it('writes [] for an empty result and gives a repeated column name a suffix', async () => {
      expect(JSON.parse((await download(`select label from scheme_view where false`, 'JSON')).text)).to.deep.equal([]);
      expect(JSON.parse((await download(`select 1 as a, 2 as a, 3 as a_2`, 'JSON')).text)).to.deep.equal([{ a: 1, a_2: 2, a_2_2: 3 }]);
    });
  });

  describe('XML', () => {
    it('writes result/row/column elements, leaves nulls out and escapes text', async () => {
      const { r, text } = await download(KINDS, 'XML');
      expect(r.headers.get('content-type')).to.equal('application/xml; charset=utf-8');
      expect(text).to.equal('<?xml version="1.0" encoding="UTF-8"?><result><row><n>1</n><plain>plain</plain><yes>true</yes><no>false</no>'
        + '<ts>2024-01-02T03:04:05.600</ts><tstz>2024-01-02T01:04:05.678</tstz><empty></empty><comma>a,b</comma>'
        + '<quote>say "hi"</quote><newline>two\nlines</newline><big>12345678901234567</big><num>1.10</num><flt>0.1</flt>'
        + '<day>2024-02-29</day><doc>{"a": [1, 2]}</doc><backslash>back\\slash</backslash><markup>x &lt; y &amp; z</markup></row></result>');
      // A parser reads the text back as it was.
      const markup = create(text).root().first().last().node.textContent;
      expect(markup).to.equal('x < y & z');
    });

    it('maps column names that are not XML names as SQL/XML does, and keeps repeated ones', async () => {
      const { text } = await download(`select 1, 2 as "xml_data", 3 as "1st", 4 as "a b", 5 as "_x", 6 as "ns:name", 7 as a, 8 as a`, 'XML');
      expect(text).to.equal('<?xml version="1.0" encoding="UTF-8"?><result><row><_x003F_column_x003F_>1</_x003F_column_x003F_>'
        + '<_x0078_ml_data>2</_x0078_ml_data><_x0031_st>3</_x0031_st><a_x0020_b>4</a_x0020_b><_x005F_x>5</_x005F_x>'
        + '<ns_x003A_name>6</ns_x003A_name><a>7</a><a>8</a></row></result>');
      expect(() => create(text)).not.to.throw();
    });

    it('writes an empty result element for no rows', async () => {
      expect((await download(`select label from scheme_view where false`, 'XML')).text).to.equal('<?xml version="1.0" encoding="UTF-8"?><result></result>');
    });

    it('writes what xmlbuilder2 writes for the same rows', async () => {
      // Text values only: the JSON result gives them back exactly as the XML must carry them.
      const sql = `select * from (values ('a<b>&c', null, 'x', '"quotes" ''too'''), ('', E'tab\\there', 'emoji 🎉', E'ctrl\\u0001char'),
        (E'back\\\\slash', E'line\\nbreak', 'plain', null)) v(label, "?column?", xmlish, "ünïcode")`;
      const names = ['label', '?column?', 'xmlish', 'ünïcode'];
      const json = JSON.parse((await download(sql, 'JSON')).text) as Record<string, string | null>[];
      expect(json[1]['ünïcode']).to.equal('ctrl\u0001char');
      const doc = create({ invalidCharReplacement: '\uFFFD' }).dec({ version: '1.0', encoding: 'UTF-8' }).ele('result');
      for (const row of json) {
        const element = doc.ele('row');
        for (const name of names) if (row[name] !== null) element.ele(xmlName(name)).txt(row[name]!);
      }
      // xmlbuilder2 shortens an empty element; the service writes it out.
      const expected = doc.end({ prettyPrint: false }).replace(/<([^>/\s]+)\/>/g, '<$1></$1>');
      expect((await download(sql, 'XML')).text).to.equal(expected);
      expect((await download(`select E'line\\r\\nend' as a`, 'XML')).text).to.include('<row><a>line&#xD;\nend</a></row>');
    });
  });

  describe('streaming', () => {
    it('streams results of many rows in every format', async () => {
      const n = 20_000;
      const csv = (await download(rowsOf(n), 'CSV')).text.split('\r\n');
      expect(csv.length).to.equal(n + 2);
      expect(csv[n]).to.equal(`${n},row ${n}`);
      const json = JSON.parse((await download(rowsOf(n), 'JSON')).text);
      expect(json.length).to.equal(n);
      expect(json[n - 1]).to.deep.equal({ n, label: `row ${n}` });
      const xml = (await download(rowsOf(n), 'XML')).text;
      expect(xml.match(/<row>/g)!.length).to.equal(n);
    });

    it('answers 400 with the database error when the statement fails in its first rows, not a broken 200', async () => {
      const r = await runQuery(t, f.db, `with recursive r(n) as (select 1 union all select n + 1 from r where n < 10) select 1 / (n - 3) from r`, { format: 'JSON' });
      expect(r.status).to.equal(400);
      expect(await r.json()).to.deep.equal({ message: 'division by zero' });
    });

    it('breaks off the answer, rather than end it short, when the statement fails after the result started', async () => {
      const r = await runQuery(t, f.db, `with recursive r(n) as (select 1 union all select n + 1 from r where n < 400000) select n, 1 / (n - 300000) from r`, { format: 'CSV' });
      if (r.status === 400) {
        // Embedded: the whole result is written before the answer starts, so the failure is still a 400.
        expect(t.service.storage.kind).to.equal('pglite');
        expect(await r.json()).to.deep.equal({ message: 'division by zero' });
        return;
      }
      expect(r.status).to.equal(200);
      let failed = false;
      await r.text().catch(() => { failed = true; });
      expect(failed).to.equal(true);
    });
  });

  describe('requests', () => {
    it('refuses an unknown format, a body without sql, and other properties', async () => {
      let r = await runQuery(t, f.db, 'select 1', { format: 'YAML' });
      expect(r.status).to.equal(400);
      expect((await r.json()).violations).to.deep.equal([{ path: 'format', message: 'The value is not allowed; allowed: CSV, JSON, XML.' }]);
      r = await runQuery(t, f.db, '', { body: {} });
      expect(r.status).to.equal(400);
      expect((await r.json()).violations[0].path).to.equal('sql');
      r = await runQuery(t, f.db, '', { body: { sql: 42 } });
      expect((await r.json()).violations[0].path).to.equal('sql');
      r = await runQuery(t, f.db, '', { body: { sql: 'select 1', sq1: 'typo' } });
      expect((await r.json()).violations[0].path).to.equal('sq1');
      r = await t.request(`/api/${f.db}/queries/download`, { method: 'PUT', body: 'select 1', headers: { 'content-type': 'text/plain' } });
      expect(r.status).to.equal(415);
    });
  });

  describe('pieces', () => {
    it('quotes CSV fields exactly as COPY does', () => {
      expect(csvLine(['a', '', null, 'x,y', 'q"q', 'l\nl', 'c\rc', '\\.', ' s '])).to.equal('a,"",,"x,y","q""q","l\nl","c\rc","\\.", s \r\n');
    });

    it('ends COPY\'s records with CRLF, however its output is cut into parts, and leaves line breaks inside values', () => {
      const values = ['a', '', null, 'x,y', 'q"q', '""', '"', 'l\nl', '\n', 'c\r\nc', 'ünï', '\\.', 'end"\n'];
      let seed = 7;
      const random = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      const rows = Array.from({ length: 300 }, () => Array.from({ length: 1 + random(4) }, () => values[random(values.length)]));
      const expected = Buffer.from(rows.map(csvLine).join(''));
      // COPY's bytes: the same records, ending with LF only.
      const copied = Buffer.from(rows.map((row) => `${csvLine(row).slice(0, -2)}\n`).join(''));
      for (let round = 0; round < 50; round++) {
        const records = new CsvRecordEnds();
        const parts: Buffer[] = [];
        for (let at = 0; at < copied.length;) {
          const size = round === 0 ? 1 : 1 + random(round * 8);
          parts.push(records.convert(copied.subarray(at, at + size)));
          at += size;
        }
        expect(Buffer.concat(parts).equals(expected), `round ${round}`).to.equal(true);
      }
    });

    it('undoes COPY\'s escapes and replaces what XML cannot carry', () => {
      const copied = Buffer.from('a\\\\b\\nc\\td\\\\n\nsecond row\\\\\n');
      expect(copyRows(copied, Buffer.from(',\n'), Buffer.from('[')).toString()).to.equal('[a\\b\nc\td\\n,\nsecond row\\');
      expect(copyRows(copied, Buffer.alloc(0)).toString()).to.equal('a\\b\nc\td\\nsecond row\\');
      expect(validXml('ok\u0001\u000b\ufffe\ttab\nline')).to.equal('ok\ufffd\ufffd\ufffd\ttab\nline');
      const clean = Buffer.from('<a>ünïcode 🎉\ttab</a>');
      expect(validXmlBytes(clean)).to.equal(clean);
      expect(validXmlBytes(Buffer.from('x\u0001y\uffffz')).toString()).to.equal('x\ufffdy\ufffdz');
    });

    it('keeps JSON keys apart', () => {
      expect(uniqueNames(['a', 'a', 'a_2', 'b'])).to.deep.equal(['a', 'a_2', 'a_2_2', 'b']);
    });
  });
});
