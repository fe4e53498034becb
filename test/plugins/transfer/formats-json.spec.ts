/**
 * The JSON format's fast reading (formats/json.ts): JSON.parse gives the
 * records the tree reading gives, each with the same place once asked for,
 * and leaves every file it does not read alike to the tree reading, which
 * reports the problem at its place.
 */
import { expect } from 'chai';
import { fastJsonRecords, json, jsonRecords } from '../../../plugins/transfer/formats/json.ts';
import { FileProblem } from '../../../plugins/transfer/records.ts';
import { context, readFromBuffer, readProblem, sampleModel, writeToBuffer } from './format-fixtures.ts';

/** Records as plain data, their places read (a getter in the fast reading). */
const plain = (records: Iterable<{ source?: unknown }>) => [...records].map((r) => ({ ...r, source: r.source }));

describe('transfer format JSON: fast reading', () => {
  it('gives the records and places of the tree reading, for a written model and for a hand-written file', async () => {
    const written = (await writeToBuffer(json, sampleModel())).toString('utf8');
    const handWritten = JSON.stringify({
      _type: 'Scheme', label: 'S', tags: ['a', 'b'], empty: [], custom: { nested: [1, { x: null }] },
      collections: [], classifiers: [
        { _type: 'Classifier', label: 'K', attributes: [{ _type: 'BusinessAttribute', label: 'a', dataType: 'STRING' }, { _type: 'BusinessAttribute', dataType: 'INTEGER' }] },
        { _type: 'Classifier', label: 3 },
      ],
      values: [{ x: 1 }, { y: [2] }],
    }, null, 1);
    for (const text of [written, handWritten]) {
      const fast = fastJsonRecords(text, context);
      expect(fast, text.slice(0, 80)).not.to.equal(undefined);
      expect(plain(fast!)).to.deep.equal(plain(jsonRecords(text, context)));
      expect(fast!.at(-1)!.source!.line).to.be.above(1);
    }
    expect(plain(await readFromBuffer(json, written))).to.deep.equal(plain(jsonRecords(written, context)));
  });

  it('leaves to the tree reading what it does not read alike, which reports it at its place', async () => {
    const cases = [
      '{\n  "_type": "Scheme",\n  "label": x\n}',
      '[{"_type": "Scheme"}]',
      '{"_type": "Scheme", "label": "S",\n "classifiers": [{"label": "no type"}, {"_type": "Classifier"}]}',
      '{"_type": "Scheme", "label": "S", "collections": [\n  "not an object"]}',
      '{"_type": {"a": 1}}',
      '{"_type": "Scheme", /* a comment */ "label": "S"}',
    ];
    for (const text of cases) {
      expect(fastJsonRecords(text, context), text).to.equal(undefined);
      const problem = await readProblem(json, text);
      expect(problem, text).to.be.instanceOf(FileProblem);
      expect(problem.position, text).to.have.property('line');
    }
  });
});
