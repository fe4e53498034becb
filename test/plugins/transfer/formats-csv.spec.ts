/**
 * The CSV format (decisions §8): a zip with one CSV file per type. Round
 * trips both ways, the columns and cells a spreadsheet program sees (the
 * formula guard among them), and the bad files: no zip, missing header
 * columns, entries with paths, archives over the limits or lying about sizes.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { PassThrough } from 'node:stream';
import { deflateRawSync } from 'node:zlib';
import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import { csv, csvFormat } from '../../../plugins/transfer/formats/csv.ts';
import { fromCell, toCell } from '../../../plugins/transfer/formats/flat.ts';
import type { PropertyDef } from '../../../runtime/host.ts';
import { FileProblem, type TransferRecord } from '../../../plugins/transfer/records.ts';
import { context, readFromBuffer, readProblem, sampleModel, withoutSource, writeToBuffer } from './format-fixtures.ts';
import { claimUncompressedSize, makeZip, patchBytes, unzip } from './zip-fixtures.ts';

const HEADER = '_parent,_list,label';

async function tables(bytes: Buffer): Promise<Map<string, string[][]>> {
  const out = new Map<string, string[][]>();
  for (const [name, data] of await unzip(bytes)) out.set(name, parse(data, { bom: true, relax_column_count: true }) as string[][]);
  return out;
}

describe('transfer format CSV', () => {
  it('gives back the records it wrote, and the same bytes when written again', async () => {
    const records = sampleModel();
    const bytes = await writeToBuffer(csv, records);
    const read = await readFromBuffer(csv, bytes);
    expect(withoutSource(read)).to.deep.equal(records);
    const again = await writeToBuffer(csv, read);
    expect(again.equals(bytes)).to.equal(true);
  });

  it('writes one table per type with the fixed columns, the metamodel order, then custom properties sorted', async () => {
    const files = await tables(await writeToBuffer(csv, sampleModel()));
    expect([...files.keys()]).to.deep.equal([
      'Scheme.csv', 'Classifier.csv', 'BusinessAttribute.csv', 'Collection.csv', 'Dataset.csv', 'Derivation.csv',
      'Distribution.csv', 'ReferenceObject.csv', 'ReferenceValue.csv', 'Enumeration.csv', 'Literal.csv',
    ]);
    const [header, root] = files.get('Scheme.csv')!;
    expect(header).to.deep.equal([
      '_parent', '_list', 'label', 'description', 'favorite', 'locked', 'modelType', 'profiles', 'readOnly', 'status', 'stereotype',
      'synonyms', 'tags', 'title', 'codeLike', 'formulaLike', 'nested', 'nothing', 'quoteStart', 'reviewed', 'score', 'steward',
    ]);
    const cell = (name: string) => root![header!.indexOf(name)];
    expect(cell('_parent')).to.equal('');
    expect(cell('_list')).to.equal('');
    expect(cell('label')).to.equal('Sales "2026"');
    expect(cell('tags')).to.equal('["a","b/c","Ärger"]');
    expect(cell('favorite')).to.equal('true');
    expect(cell('readOnly'), 'absent').to.equal('');
    expect(cell('nothing'), 'the empty text').to.equal("'");
    expect(cell('codeLike'), 'text that reads as JSON').to.equal("'42");
    expect(cell('score')).to.equal('4.5');
    expect(cell('formulaLike')).to.equal(`'=HYPERLINK("http://x")`);
    expect(cell('quoteStart')).to.equal("''already quoted");
    const distributions = files.get('Distribution.csv')!;
    expect(distributions[1]!.slice(0, 3)).to.deep.equal(['Orders/"Order/Lines"', 'distributions', 'CSV export']);
  });

  it('writes no cell that a spreadsheet program would run as a formula', async () => {
    for (const [name, rows] of await tables(await writeToBuffer(csv, sampleModel()))) {
      for (const row of rows) {
        for (const text of row) {
          const number = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(text);
          expect(!number && /^[=+\-@\t\r]/.test(text), `${name}: ${JSON.stringify(text)}`).to.equal(false);
        }
      }
    }
    const collections = (await tables(await writeToBuffer(csv, sampleModel()))).get('Collection.csv')!;
    expect(collections[1]![collections[0]!.indexOf('title')]).to.equal("'=1+2");
  });

  it('names rows by file and row, the header being row 1, and rebuilds keys from _parent and label', async () => {
    const table = `${HEADER},title,order\r\n,collections,A,"two\nlines",\r\nA,collections,"B/""C""",,\r\n`;
    const bytes = await makeZip([['Collection.csv', table]]);
    const read = await readFromBuffer(csv, bytes);
    expect(read).to.deep.equal([
      { type: 'Collection', key: ['A'], list: 'collections', properties: { label: 'A', title: 'two\nlines' }, source: { sheet: 'Collection.csv', row: 2 } },
      { type: 'Collection', key: ['A', 'B/"C"'], list: 'collections', properties: { label: 'B/"C"' }, source: { sheet: 'Collection.csv', row: 3 } },
    ]);
  });

  it('puts parents before children across tables, and keeps rows whose parent is not in the file', async () => {
    const bytes = await makeZip([
      ['Distribution.csv', `${HEADER}\nOrders/Lines,distributions,D1\nElsewhere/X,distributions,D2\n`],
      ['Dataset.csv', `${HEADER}\nOrders,datasets,Lines\n`],
      ['Collection.csv', `${HEADER}\n,collections,Orders\n`],
      ['README.txt', 'skipped'],
    ]);
    const keys = (await readFromBuffer(csv, bytes)).map(record => record.key.join('|'));
    expect(keys).to.deep.equal(['Orders', 'Orders|Lines', 'Orders|Lines|D1', 'Elsewhere|X|D2']);
  });

  it('keeps a column the metamodel does not know as a property, reading JSON where the cell is JSON', async () => {
    const bytes = await makeZip([['Dataset.csv', `${HEADER},costCentre,weight,flags,note\n,datasets,A,4711,2.5,"[1,2]",'007\n`]]);
    const [record] = await readFromBuffer(csv, bytes);
    expect(record!.properties).to.deep.equal({ label: 'A', costCentre: 4711, weight: 2.5, flags: [1, 2], note: '007' });
  });

  it('reads what a spreadsheet program wrote: TRUE, numbers as text, an apostrophe before a key', async () => {
    const bytes = await makeZip([['BusinessAttribute.csv', `${HEADER},identifying,order,hasRange\n,attributes,a,TRUE,7,'/Data Domains/Date\n`]]);
    const [record] = await readFromBuffer(csv, bytes);
    expect(record!.properties).to.deep.equal({ label: 'a', identifying: true, order: 7, hasRange: '/Data Domains/Date' });
  });

  describe('refuses bad files with a FileProblem', () => {
    const refused = async (bytes: Buffer, pattern: RegExp, format = csv) => {
      const problem = await readProblem(format, bytes);
      expect(problem).to.be.instanceOf(FileProblem);
      expect(problem.message).to.match(pattern);
      return problem;
    };

    it('a file that is no zip', async () => {
      await refused(Buffer.from(`${HEADER}\n,collections,A\n`), /not a readable zip/);
    });

    for (const missing of ['_parent', '_list', 'label']) {
      it(`a table without the column ${missing}, naming the file`, async () => {
        const header = ['_parent', '_list', 'label', 'title'].filter(name => name !== missing).join(',');
        const problem = await refused(await makeZip([['Collection.csv', `${header}\na,b,c\n`]]), new RegExp(`Collection.csv: the header row has no column ${missing}`));
        expect((problem as FileProblem).position).to.deep.equal({ sheet: 'Collection.csv', row: 1 });
      });
    }

    it('an empty table, a header naming a column twice, a malformed CSV', async () => {
      await refused(await makeZip([['Collection.csv', '']]), /Collection.csv: the file is empty/);
      await refused(await makeZip([['Collection.csv', `${HEADER},label\n`]]), /names the column label twice/);
      await refused(await makeZip([['Collection.csv', `${HEADER}\n,collections,"unclosed\n`]]), /Collection.csv: not readable as CSV/);
    });

    it('a cell of a JSON column that is not JSON, naming file, row and column', async () => {
      const problem = await refused(await makeZip([['Collection.csv', `${HEADER},tags\n,collections,A,[oops\n`]]), /Collection.csv, row 2, column tags: the cell must hold JSON/);
      expect((problem as FileProblem).position).to.deep.equal({ sheet: 'Collection.csv', row: 2 });
    });

    it('a second root, a key in _parent that is not one', async () => {
      await refused(await makeZip([['Scheme.csv', `${HEADER}\n,,A\n,,B\n`]]), /row 3: a second row without _list/);
      await refused(await makeZip([['Collection.csv', `${HEADER}\n"""A""x",collections,B\n`]]), /row 2: .* is not a business key/);
      await refused(await makeZip([['Collection.csv', `${HEADER}\n/Other/A,collections,B\n`]]), /row 2: .* is not a business key within the model/);
    });

    it('entries whose names leave the archive', async () => {
      const bytes = patchBytes(await makeZip([['AA/evil.csv', `${HEADER}\n`]]), 'AA/evil', '../evil');
      await refused(bytes, /leaves the archive/);
      const absolute = patchBytes(await makeZip([['Xetc/passwd.csv', `${HEADER}\n`]]), 'Xetc/', '/etc/');
      await refused(absolute, /absolute path/);
    });

    it('too many entries, too many bytes (options), refusing before inflating', async () => {
      const five = await makeZip([1, 2, 3, 4, 5].map(i => [`T${i}.csv`, `${HEADER}\n`] as [string, string]));
      await refused(five, /holds 5 entries, more than the 3 allowed/, csvFormat({ maxEntries: 3, maxTotalBytes: 1e9, maxRatio: 200 }));
      await refused(five, /would inflate to more than 40 bytes/, csvFormat({ maxEntries: 10, maxTotalBytes: 40, maxRatio: 200 }));
    });

    it('an entry compressed beyond the ratio (a zip bomb), with the default limits', async () => {
      const bomb = await makeZip([['Collection.csv', Buffer.alloc(50 * 1024 * 1024, 0x41)]]);
      expect(bomb.length).to.be.below(200_000);
      const started = Date.now();
      await refused(bomb, /compressed more than 200 times .*zip bomb/);
      expect(Date.now() - started, 'refused from the directory, without inflating').to.be.below(2000);
    });

    it('an archive that declares fewer bytes than it inflates to', async () => {
      const honest = await makeZip([['Collection.csv', `${HEADER}\n${',collections,A\n'.repeat(20_000)}`]]);
      await refused(claimUncompressedSize(honest, 100), /damaged entry|unreadable entry|inflates/);
    });
  });

  it('deflate of 50 MB of one letter is a bomb indeed (the fixture is what it claims)', () => {
    expect(deflateRawSync(Buffer.alloc(50 * 1024 * 1024, 0x41)).length).to.be.below(100_000);
  });

  it('writes DATETIME as ISO 8601 text and reads it back (and epoch milliseconds, and text that is neither)', () => {
    const property = { name: 'validFrom', dataType: 'DATETIME', many: false } as PropertyDef;
    const style = { typedCells: false, guardFormulas: true };
    const where = () => ({ source: {}, column: 'validFrom' });
    expect(toCell(1767225600123, property, style)).to.equal('2026-01-01T00:00:00.123Z');
    expect(toCell(-631152000000, property, style)).to.equal('1950-01-01T00:00:00.000Z');
    expect(fromCell('2026-01-01T00:00:00.123Z', property, where)).to.equal(1767225600123);
    expect(fromCell('1950-01-01T00:00:00.000Z', property, where)).to.equal(-631152000000);
    expect(fromCell('1767225600123', property, where)).to.equal(1767225600123);
    expect(fromCell('tomorrow', property, where), 'kept for the engine to refuse').to.equal('tomorrow');
  });

  it('leaves no temporary files behind, when ended or aborted', async () => {
    // A temporary folder of this test's own: other suites running at the same time write CSV downloads too.
    const own = mkdtempSync(join(tmpdir(), 'csv-staging-test-'));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = own;
    try {
      const staging = () => readdirSync(own).filter(name => name.startsWith('transfer-formats-')).length;
      await writeToBuffer(csv, sampleModel());
      expect(staging()).to.equal(0);
      const writer = csv.writer(new PassThrough(), context);
      for (const record of sampleModel()) await writer.write(record);
      expect(staging()).to.equal(1);
      await writer.abort!();
      expect(staging()).to.equal(0);
      // Aborted while its records still wait for the staging folder to be made:
      // the folder and the files opened for them go too, once they have closed.
      const early = csv.writer(new PassThrough(), context);
      const waiting = sampleModel().map(record => early.write(record));
      await early.abort!();
      await Promise.all(waiting);
      expect(staging()).to.equal(0);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR; else process.env.TMPDIR = saved;
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('writes an empty zip for no records, and reads it as none', async () => {
    const bytes = await writeToBuffer(csv, [] as TransferRecord[]);
    expect(await readFromBuffer(csv, bytes)).to.deep.equal([]);
  });
});
