/**
 * The JSON format's streaming reading (formats/json.ts): token by token, it
 * gives the records and places the tree reading gives, whatever order an
 * object's members come in, and reports every problem as the tree reading
 * does, at the same place.
 */
import { expect } from 'chai';
import { json, jsonRecords, streamJsonRecords } from '../../../plugins/transfer/formats/json.ts';
import { FileProblem } from '../../../plugins/transfer/records.ts';
import { context, readFromBuffer, readProblem, sampleModel, writeToBuffer } from './format-fixtures.ts';

/** The tree reading's problem with a text, or undefined. */
function treeProblem(text: string): FileProblem | undefined {
  try {
    [...jsonRecords(text, context)];
    return undefined;
  } catch (err) {
    if (err instanceof FileProblem) return err;
    throw err;
  }
}

describe('transfer format JSON: streaming reading', () => {
  it('gives the records and places of the tree reading, for a written model and for hand-written files', async () => {
    const written = (await writeToBuffer(json, sampleModel())).toString('utf8');
    const handWritten = JSON.stringify({
      _type: 'Scheme', label: 'S', tags: ['a', 'b'], empty: [], custom: { nested: [1, { x: null }] },
      collections: [], classifiers: [
        { _type: 'Classifier', label: 'K', attributes: [{ _type: 'BusinessAttribute', label: 'a', dataType: 'STRING' }, { _type: 'BusinessAttribute', dataType: 'INTEGER' }] },
        { _type: 'Classifier', label: 3 },
      ],
      values: [{ x: 1 }, { y: [2] }],
    }, null, 1);
    // Lists before `_type` and before the label, properties after lists, a typed list of a name the type does not have, an unknown type's lists.
    const reordered = JSON.stringify({
      collections: [{ classifiers: [{ label: 'K', _type: 'Classifier' }], _type: 'Collection', label: 'late' }],
      _type: 'Scheme',
      classifiers: [{ _type: 'Classifier', attributes: [{ _type: 'BusinessAttribute', label: 'a' }], label: 'K2' }],
      label: 'S', description: 'after the lists',
      others: [{ _type: 'Nothing', things: [{ _type: 'Thing', label: 't' }] }],
      __proto__: { kept: true },
    }, null, 2).replace('"__proto__"', '"__proto__"');
    const crlf = written.replace(/\n/g, '\r\n');
    const lone = `{"_type": "Scheme",\n"label": "escapes",\n\n"classifiers": [{"_type": "Classifier", "label": "Größe \\u00e4 \\"x\\" 😀"}], "n": -12.5e3, "t": true, "f": false, "z": null}`;
    for (const text of [written, handWritten, reordered, crlf, JSON.stringify(JSON.parse(written)), lone]) {
      const tree = [...jsonRecords(text, context)];
      const streamed = await streamJsonRecords(Buffer.from(text), context);
      expect(streamed, text.slice(0, 80)).to.deep.equal(tree);
      expect(streamed.at(-1)!.source!.line).to.be.at.least(1);
      // In pieces: every token, line break (CR LF too) and character (umlauts, an emoji's four bytes) split at some boundary.
      for (const size of [1, 2, 3, 7, 64]) {
        expect(await streamJsonRecords(Buffer.from(text), context, size), `${size} bytes at a time: ${text.slice(0, 60)}`).to.deep.equal(tree);
      }
    }
    // A byte order mark is dropped, in pieces too; the places count from after it, as the tree reading of the text without it.
    const withMark = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(handWritten)]);
    for (const size of [1, 2, 65536]) expect(await streamJsonRecords(withMark, context, size)).to.deep.equal([...jsonRecords(handWritten, context)]);
    expect(await readFromBuffer(json, written)).to.deep.equal([...jsonRecords(written, context)]);
    expect((await streamJsonRecords(Buffer.from(reordered), context))[0].properties.description).to.equal('after the lists');
    expect((await streamJsonRecords(Buffer.from(reordered), context)).map((r) => r.key.join('/'))).to.deep.equal(['', 'late', 'late/K', 'K2', 'K2/a', '', '/t']);
  });

  it('reports each problem as the tree reading does, at its place', async () => {
    const cases = [
      '{\n  "_type": "Scheme",\n  "label": x\n}',
      '[{"_type": "Scheme"}]',
      '"just a string"',
      '',
      '{"_type": "Scheme", "label": "S",\n "classifiers": [{"label": "no type"}, {"_type": "Classifier"}]}',
      '{"_type": "Scheme", "label": "S", "collections": [\n  "not an object"]}',
      '{"label": "S", "collections": [\n  "not an object"], "_type": "Scheme"}',
      '{"_type": {"a": 1}}',
      '{"_type": "Scheme", /* a comment */ "label": "S"}',
      '{"_type": "Scheme", "label": "S",}',
      '{"_type": "Scheme", "label": "S"} {}',
      '{"_type": "Scheme", "label": "S", "collections": [{"_type": "Collection", "label": "C"}',
      '{"_type": "Scheme", "label": "tab\tin a string"}',
      '{"_type": "Scheme", "n": 01}',
      '{"_type": "Scheme", "n": -}',
      '{"_type": "Scheme", "collections": [{"label": "no type", "description": "x"}],\n "label": 1 2}',
    ];
    for (const text of cases) {
      const expected = treeProblem(text);
      expect(expected, text).to.be.instanceOf(FileProblem);
      const problem = await readProblem(json, text);
      expect(problem, text).to.be.instanceOf(FileProblem);
      expect(problem.message, text).to.equal(expected!.message);
      expect(problem.position, text).to.deep.equal(expected!.position);
      expect(problem.position, text).to.have.property('line');
      for (const size of [1, 3]) {
        const inPieces = await streamJsonRecords(Buffer.from(text), context, size).then(() => undefined, (err: unknown) => err);
        expect(inPieces, `${size} bytes at a time: ${text}`).to.be.instanceOf(FileProblem);
        expect((inPieces as FileProblem).message, text).to.equal(expected!.message);
        expect((inPieces as FileProblem).position, text).to.deep.equal(expected!.position);
      }
    }
  });

  it('refuses a file that is not UTF-8, wherever the bytes are: before, after or without a syntax problem', async () => {
    const latin1 = (text: string) => Buffer.from(text, 'latin1');
    for (const bytes of [
      latin1('{"_type": "Scheme", "label": "Gr\u00f6\u00dfe"}'),
      Buffer.concat([Buffer.from(`{"_type": "Scheme", "label": "S", "description": "${'x'.repeat(200_000)}`), latin1('\u00e4"}')]),
      latin1('{"_type": "Scheme", "label": x, "description": "\u00e4"}'),
      Buffer.concat([Buffer.from('{"_type": "Scheme", "label": "S\u00e4'), Buffer.from([0xc3])]),
    ]) {
      for (const size of [1, 4096, 65536]) {
        const problem = await streamJsonRecords(bytes, context, size).then(() => undefined, (err: unknown) => err);
        expect(problem).to.be.instanceOf(FileProblem);
        expect((problem as FileProblem).message).to.equal('JSON: the file is not UTF-8 text');
      }
      expect((await readProblem(json, bytes)).message).to.equal('JSON: the file is not UTF-8 text');
    }
  });

  it('refuses values and objects nested too deep with a problem, not a crash', async () => {
    const deep = `{"_type": "Scheme", "label": "S", "x": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const problem = await readProblem(json, deep);
    expect(problem).to.be.instanceOf(FileProblem);
    expect(problem.message).to.match(/values nest deeper/);
    const levels = 20_000;
    const collections = `{"_type": "Scheme", "label": "S", "collections": [${'{"_type": "Collection", "label": "C", "collections": ['.repeat(levels)}${']}'.repeat(levels)}]}`;
    const tooDeep = await readProblem(json, collections);
    expect(tooDeep).to.be.instanceOf(FileProblem);
    expect(tooDeep.message).to.match(/objects nest deeper/);
    // The 501st collection down (after 50 characters of the scheme and 54 of each collection above it).
    expect(tooDeep.position).to.deep.equal({ line: 1, column: 51 + 54 * 500 });
  });
});
