/**
 * An upload keeps every record it read until it commits (upload.ts); this
 * measures, for every format's reading, what two parts of the records take:
 *
 * - The keys (the labels from the root down). Made as `[...parent, label]`,
 *   V8 gave each key room for about 16 more labels (184 bytes for a key of
 *   two labels instead of 64; 16 MB of nothing for 110,000 objects). The
 *   readings make them with `appended` (records.ts).
 * - The texts: a text the reading cut out of a larger one (a piece of the
 *   file) may be a view of it in V8, and then keeps all of it.
 */
import { expect } from 'chai';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FORMATS } from '../../../plugins/transfer/formats/index.ts';
import { appended, type TransferRecord } from '../../../plugins/transfer/records.ts';
import { readFromBuffer, writeToBuffer } from './format-fixtures.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const CLASSIFIERS = 20;
const ATTRIBUTES = 1000;

/** A scheme of CLASSIFIERS classifiers of ATTRIBUTES attributes each, depth first. */
function model(): TransferRecord[] {
  const records: TransferRecord[] = [{ type: 'Scheme', key: [], properties: { label: 'S' } }];
  for (let k = 0; k < CLASSIFIERS; k++) {
    records.push({ type: 'Classifier', key: [`K${k}`], list: 'classifiers', properties: { label: `K${k}` } });
    for (let a = 0; a < ATTRIBUTES; a++) {
      records.push({
        type: 'BusinessAttribute', key: [`K${k}`, `a${a}`], list: 'attributes',
        properties: { label: `a${a}`, description: `The description of attribute ${a} of classifier ${k}, long enough to be cut out` },
      });
    }
  }
  return records;
}

/** Bytes the records' descriptions take, per description that a record has, over what the text itself takes (16 bytes and one a character). */
function descriptionOverhead(records: TransferRecord[]): number {
  const described = records.filter((r) => typeof r.properties.description === 'string');
  const own = described.reduce((sum, r) => sum + 16 + (r.properties.description as string).length, 0);
  gc();
  const before = process.memoryUsage().heapUsed;
  for (const r of described) r.properties.description = '';
  gc();
  return (before - process.memoryUsage().heapUsed - own) / described.length;
}

/** Bytes the records' keys take, per record: the heap they free when they are let go (their labels are the records' too). */
function keyBytes(records: TransferRecord[]): number {
  gc();
  const before = process.memoryUsage().heapUsed;
  const none: string[] = [];
  for (const r of records) r.key = none;
  gc();
  return (before - process.memoryUsage().heapUsed) / records.length;
}

describe('transfer: what the records an upload reads take', () => {
  it('appended gives the items and then the item, in a new array of exactly that length', () => {
    const parent = ['a', 'b'];
    const key = appended(parent, 'c');
    expect(key).to.deep.equal(['a', 'b', 'c']);
    expect(parent).to.deep.equal(['a', 'b']);
    expect(appended([], '')).to.deep.equal(['']);
    // What a spread-made key took, against one made exactly (the measure the formats are held to below).
    const spread = Array.from({ length: 20_000 }, (_, i) => ({ type: 'T', key: [...['K'], `a${i}`], properties: {} }));
    const exact = Array.from({ length: 20_000 }, (_, i) => ({ type: 'T', key: appended(['K'], `a${i}`), properties: {} }));
    expect(keyBytes(spread)).to.be.above(150);
    expect(keyBytes(exact)).to.be.below(100);
  });

  for (const [name, format] of Object.entries(FORMATS)) {
    it(`${name}: a key of two labels takes less than 100 bytes`, async function () {
      this.timeout(120_000);
      const written = model();
      const records = await readFromBuffer(format!, await writeToBuffer(format!, written));
      expect(records.length).to.equal(written.length);
      expect(records[records.length - 1].key).to.deep.equal([`K${CLASSIFIERS - 1}`, `a${ATTRIBUTES - 1}`]);
      expect(keyBytes(records)).to.be.below(100);
    });

    it(`${name}: a text read takes about its own size, not the piece of the file it was read from`, async function () {
      this.timeout(120_000);
      const records = await readFromBuffer(format!, await writeToBuffer(format!, model()));
      expect(records[records.length - 1].properties.description).to.match(/^The description of attribute 999 of classifier 19/);
      // A view of a piece takes 32 bytes beside the piece it keeps; a copy as much as the text again at most.
      expect(descriptionOverhead(records)).to.be.below(64);
    });
  }
});
