/**
 * The XML format (decisions §8): a tree like the JSON download. Round trips
 * both ways (byte for byte), the shape a reader sees, parts of models, and
 * the bad files: DTDs with entity bombs or external entities (refused, never
 * expanded), undefined entities, malformed XML, values that say the wrong type.
 */
import { expect } from 'chai';
import { xml } from '../../../plugins/transfer/formats/xml.ts';
import { FileProblem, type TransferRecord } from '../../../plugins/transfer/records.ts';
import { readFromBuffer, readProblem, sampleModel, withoutSource, writeToBuffer } from './format-fixtures.ts';

const r = (type: string, key: string[], list: string | undefined, properties: Record<string, unknown>): TransferRecord =>
  ({ type, key, ...(list === undefined ? {} : { list }), properties });

describe('transfer format XML', () => {
  it('gives back the records it wrote, and the same bytes when written again', async () => {
    const records = sampleModel();
    const bytes = await writeToBuffer(xml, records);
    const read = await readFromBuffer(xml, bytes);
    expect(withoutSource(read)).to.deep.equal(records);
    expect((await writeToBuffer(xml, read)).equals(bytes)).to.equal(true);
  });

  it('writes the tree a person reads: types as elements, lists, typed values', async () => {
    const text = (await writeToBuffer(xml, sampleModel())).toString('utf8');
    expect(text).to.match(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<Scheme>\n {2}<label>Sales "2026"<\/label>/);
    expect(text).to.include('<list name="collections">\n    <Collection>\n      <label>Orders</label>');
    expect(text).to.include('<favorite type="boolean">true</favorite>');
    expect(text).to.include('<maxCardinality type="number">-1</maxCardinality>');
    expect(text).to.include('<tags type="list">\n    <item>a</item>');
    expect(text).to.include('<derivedTo>Orders/"Order/Lines"</derivedTo>');
    expect(text).to.include('<description type="json">"Line 1\\nLine 2\\r\\nLine 3\\n"</description>');
    expect(text).to.include('<description type="json">"AT&amp;amp;T &amp;lt;b&amp;gt; _x000D_ &amp; \\u0001 bell"</description>');
    expect(text).to.include('<nothing/>');
  });

  it('gives each record its line, and names a property whose name is no XML name', async () => {
    const records = [
      r('Scheme', [], undefined, { label: 'S', 'Kosten €': 12, list: 'a property named list', '1st': 'x' }),
      r('Collection', ['A'], 'collections', { label: 'A' }),
    ];
    const bytes = await writeToBuffer(xml, records);
    expect(bytes.toString('utf8')).to.include('<property name="Kosten €" type="number">12</property>');
    const read = await readFromBuffer(xml, bytes);
    expect(withoutSource(read)).to.deep.equal(records);
    expect(read.map(record => record.source?.line)).to.deep.equal([2, 8]);
  });

  it('writes part of a model: no root, parents outside the file named by key', async () => {
    const records = [
      r('Dataset', ['Orders', 'Lines'], 'datasets', { label: 'Lines' }),
      r('Distribution', ['Orders', 'Lines', 'CSV'], 'distributions', { label: 'CSV' }),
      r('Distribution', ['Other', 'Line\nbreak', 'D'], 'distributions', { label: 'D' }),
    ];
    const bytes = await writeToBuffer(xml, records);
    const text = bytes.toString('utf8');
    expect(text).to.match(/^<\?xml[^>]*>\n<transfer>/);
    expect(text).to.include('<Dataset parent="Orders">');
    expect(text).to.include('<Distribution parentJson="&quot;Other/Line\\nbreak&quot;">');
    const read = await readFromBuffer(xml, bytes);
    expect(withoutSource(read)).to.deep.equal(records);
    expect((await writeToBuffer(xml, read)).equals(bytes)).to.equal(true);
  });

  it('reads a file a person wrote: numbers and booleans of the metamodel without type, a byte-order mark, comments', async () => {
    const text = '\uFEFF<?xml version="1.0"?>\n<!-- hand made -->\n<Scheme><label>S</label><locked>true</locked><code>7</code>\n<list name="classifiers"><Classifier><label>C &amp; D</label><![CDATA[]]></Classifier></list></Scheme>\n';
    expect(withoutSource(await readFromBuffer(xml, text))).to.deep.equal([
      r('Scheme', [], undefined, { label: 'S', locked: true, code: '7' }),
      r('Classifier', ['C & D'], 'classifiers', { label: 'C & D' }),
    ]);
  });

  describe('refuses bad files with a FileProblem', () => {
    const refused = async (text: string, pattern: RegExp) => {
      const problem = await readProblem(xml, text);
      expect(problem).to.be.instanceOf(FileProblem);
      expect(problem.message).to.match(pattern);
      return problem as FileProblem;
    };

    it('a billion laughs (entities defined in a DTD), without expanding them', async () => {
      const lol = ['<!ENTITY lol "lol">'];
      for (let i = 1; i <= 9; i++) lol.push(`<!ENTITY lol${i} "${`&lol${i === 1 ? '' : i - 1};`.repeat(10)}">`);
      const started = Date.now();
      const problem = await refused(`<?xml version="1.0"?>\n<!DOCTYPE lolz [\n${lol.join('\n')}\n]>\n<Scheme><label>&lol9;</label></Scheme>`, /DTD/);
      expect(problem.message).not.to.include('lollol');
      expect(Date.now() - started).to.be.below(1000);
    });

    it('an external entity (XXE), never read', async () => {
      const problem = await refused('<?xml version="1.0"?>\n<!DOCTYPE s [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<Scheme><label>&xxe;</label></Scheme>', /DTD/);
      expect(problem.message).not.to.match(/root:/);
      expect(problem.position).to.deep.include({ line: 2 });
    });

    it('an entity that no DTD defines', async () => {
      await refused('<Scheme><label>&xxe;</label></Scheme>', /not well-formed XML .*undefined entity/i);
    });

    it('malformed XML, with its line', async () => {
      const problem = await refused('<Scheme>\n<label>S</label>\n<list name="collections">\n</Scheme>', /not well-formed XML/);
      expect(problem.position).to.deep.include({ line: 4 });
      await refused('<Scheme><label>S</label>', /ends before the XML does/);
    });

    it('values that do not read as their type, unknown types, misplaced elements and text', async () => {
      await refused('<Scheme><order type="number">seven</order></Scheme>', /"seven" is not a number/);
      await refused('<Scheme><locked type="boolean">yes</locked></Scheme>', /"yes" is not true or false/);
      await refused('<Scheme><tags type="json">[oops</tags></Scheme>', /not JSON/);
      await refused('<Scheme><tags type="array"/></Scheme>', /unknown value type "array"/);
      await refused('<Scheme><tags type="list"><tag>a</tag></tags></Scheme>', /holds `item` elements/);
      await refused('<Scheme><title>a<b/></title></Scheme>', /cannot hold the element b/);
      await refused('<Scheme>stray text</Scheme>', /stands where only elements may/);
      await refused('<Scheme><list><Collection/></list></Scheme>', /`list` element needs a `name`/);
      await refused('<Scheme><list name="collections"/><title>late</title></Scheme>', /comes after its lists/);
      await refused('<Scheme><title>a</title><title>b</title></Scheme>', /property title twice/);
      await refused('<Scheme><list name="c"><Collection parent="/Other/A"/></list></Scheme>', /not a business key within the model/);
    });
  });
});
