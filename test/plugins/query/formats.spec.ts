import { expect } from 'chai';
import pg from 'pg';
import { create } from 'xmlbuilder2';
import { startService, type TestService } from '../../helpers/service.ts';
import { queryEngineOf } from '../../../plugins/query/index.ts';
import { xmlName, csvLine, uniqueNames, validXml, validXmlBytes, TEXT_ROW_QUOTE } from '../../../plugins/query/formats.ts';
import { CopyFrames, CopyOut } from '../../../plugins/query/copy-out.ts';
import { checkStatement } from '../../../plugins/query/sandbox.ts';
import { schemaOf } from '../../../runtime/storage/migrations.ts';
import { queryFixture, runQuery, type QueryFixture } from './fixtures.ts';

/** One row of every kind of value the formats treat apart. */
const KINDS = `select * from (values (
    1, 'plain', true, false, timestamp '2024-01-02 03:04:05.6', timestamptz '2024-01-02 03:04:05.678+02', ''::text, null::text,
    'a,b', 'say "hi"', E'two\\nlines', 12345678901234567::bigint, 1.10::numeric, 0.1::float8, date '2024-02-29',
    '{"a": [1, 2]}'::jsonb, E'back\\\\slash', 'x < y & z'
  )) v(n, plain, yes, no, ts, tstz, empty, nothing, comma, quote, newline, big, num, flt, day, doc, backslash, markup)`;

/** The quote and delimiter of JSON's and XML's COPY as data, and a json value kept as written, line break included. */
const CONTROL = `select chr(1) || 'a' || chr(1) || chr(1) || chr(2) as ctl, ('{"k":' || chr(10) || ' "v\\u0001"}')::json as doc, E'two\\nlines' as nl
  union all select 'plain', '[]', ''`;

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
        // Then: bytes JSON and XML rows travel through COPY with (its quote and delimiter) and a json value with a line break; no rows;
        // results of many reads from the database, one with a row larger than what CopyOut gathers before handing on, one
        // whose XML has characters replaced here and there.
        for (const sql of [KINDS, rowsOf(3000), 'select 1 as a, 2 as a, null as "?column?"', CONTROL, `${rowsOf(3)} limit 0`,
          `select * from (select n, string_agg(label, ',') over (order by n rows between 60000 preceding and current row) as text from (${rowsOf(60010)}) r) w
             where n % 20000 = 0 or n > 60000`,
          `select n, case when n % 997 = 0 then label || chr(1) else label end as label from (${rowsOf(100_000)}) r`]) {
          const statement = await checkStatement(sql, { views, schema: 'service', target: schemaOf(f.db) });
          const spec = { db: f.db, statement, format, tenant: null, version: null, language: 'en' as const, timeoutMs: 0 };
          const read = async (via: 'copy' | 'cursor') => {
            const chunks: Buffer[] = [];
            const result = await engine.run(spec, { via });
            for await (const chunk of result.stream) chunks.push(chunk as Buffer);
            return { text: Buffer.concat(chunks).toString('utf8'), rows: result.rows() };
          };
          expect(await read('cursor'), `${format}: ${sql}`).to.deep.equal(await read('copy'));
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

    it('hands on what COPY has sent while the rest is still to come, though less than a gathered part', async function () {
      const url = process.env.SERVICE_TEST_DATABASE_URL;
      if (!url) this.skip(); // embedded: no COPY
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        // About 30 kB at once (the server flushes every 8 kB), then a second's wait before the last row.
        const copy = client.query(new CopyOut(`copy (select n, case when n = 301 then pg_sleep(1)::text else repeat('x', 100) end
          from generate_series(1, 301) n) to stdout with (format csv, header)`, 'CSV'));
        const started = performance.now();
        let first = 0;
        let bytes = 0;
        for await (const part of copy) {
          first ||= performance.now() - started;
          bytes += (part as Buffer).length;
        }
        const ended = performance.now() - started;
        expect(copy.rows).to.equal(301);
        expect(bytes).to.be.above(30_000);
        expect(ended).to.be.above(1000);
        expect(first, `first part after ${first.toFixed(0)} ms, the end after ${ended.toFixed(0)} ms`).to.be.below(ended - 500);
        // The connection is the client library's again.
        expect((await client.query('select 1 as one')).rows).to.deep.equal([{ one: 1 }]);
      } finally {
        await client.end();
      }
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

    it('reads COPY\'s messages however they are cut into parts: CSV records end with CRLF, JSON and XML rows are unquoted', () => {
      const message = (code: string, body: Buffer) => {
        const header = Buffer.alloc(5);
        header.write(code, 0, 'latin1');
        header.writeUInt32BE(body.length + 4, 1);
        return Buffer.concat([header, body]);
      };
      const Q = String.fromCharCode(TEXT_ROW_QUOTE);
      const cases = [
        {
          format: 'CSV' as const,
          rows: ['n,label\n', '1,plain\n', '2,"two\nlines"\n', '3,"say ""hi"""\n', '4,"c\r\nc"\n', '5,ünï\n'],
          expected: 'n,label\r\n1,plain\r\n2,"two\nlines"\r\n3,"say ""hi"""\r\n4,"c\r\nc"\r\n5,ünï\r\n',
          count: 5,
        },
        {
          format: 'JSON' as const,
          rows: ['{"a":1}\n', `${Q}{"a":\n"${Q}${Q}x"}${Q}\n`, '{"a":"ünï"}\n'],
          expected: `\n{"a":1},\n{"a":\n"${Q}x"},\n{"a":"ünï"}`,
          count: 3,
        },
        {
          format: 'XML' as const,
          rows: ['<row><a>1</a></row>\n', `${Q}<row><a>two\nlines</a></row>${Q}\n`, `${Q}<row><a>${Q}${Q}</a></row>${Q}\n`],
          expected: '<row><a>1</a></row><row><a>two\nlines</a></row><row><a>\ufffd</a></row>',
          count: 3,
        },
      ];
      let seed = 7;
      const random = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      const after = Buffer.from('C\0\0\0\x0dCOPY 3\0Z\0\0\0\x05I', 'latin1');
      for (const c of cases) {
        const stream = Buffer.concat([
          message('H', Buffer.from([0, 0, 1, 0, 0])),
          ...c.rows.map((row, i) => [message('d', Buffer.from(row)), ...(i === 1 ? [message('N', Buffer.from('Snotice\0\0'))] : [])]).flat(),
          message('c', Buffer.alloc(0)),
          after,
        ]);
        for (let round = 0; round < 60; round++) {
          const frames = new CopyFrames(c.format);
          const out: Buffer[] = [];
          let rest: Buffer | undefined;
          // Odd rounds write into one buffer, each part after the last, as CopyOut gathers them; even rounds each part
          // into a buffer of exactly its room.
          const gathered = Buffer.alloc(4096, '#');
          let pos = 3;
          for (let at = 0; at < stream.length && rest === undefined;) {
            const size = round === 0 ? 1 : 1 + random(round * 4);
            const room = frames.room(size);
            const target = round % 2 ? gathered : Buffer.alloc(room + 1, '#');
            const from = round % 2 ? pos : 0;
            const r = frames.take(stream.subarray(at, at + size), target, from);
            if (r.apart) {
              expect(c.format).to.equal('XML'); // text with characters replaced
              target.fill('#', from);
            } else {
              expect(r.part.buffer).to.equal(target.buffer);
              expect(r.part.byteOffset - target.byteOffset).to.equal(from);
              expect(r.part.length).to.be.at.most(room);
              expect(target[from + r.part.length], 'nothing written past the part').to.equal(0x23);
              if (round % 2) pos += r.part.length;
            }
            out.push(r.part);
            at += size;
            if (r.rest) {
              expect(r.done).to.equal(true);
              rest = Buffer.concat([r.rest, stream.subarray(at)]);
            }
          }
          expect(Buffer.concat(out).toString(), `${c.format}, round ${round}`).to.equal(c.expected);
          expect(rest, `${c.format}, round ${round}`).to.deep.equal(after);
          expect(frames.rows).to.equal(c.count);
        }
      }
      // An error: what the server says from there on is the client library's, and COPY is not over.
      const frames = new CopyFrames('CSV');
      const error = message('E', Buffer.from('SERROR\0\0'));
      const chunk = Buffer.concat([message('H', Buffer.from([0, 0, 1, 0, 0])), message('d', Buffer.from('1\n')), error, after]);
      const r = frames.take(chunk, Buffer.alloc(frames.room(chunk.length)), 0);
      expect(r.part.toString()).to.equal('1\r\n');
      expect(r.done).to.equal(false);
      expect(r.rest).to.deep.equal(Buffer.concat([error, after]));
    });

    it('replaces what XML cannot carry', () => {
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
