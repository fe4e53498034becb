/**
 * What the download engine derives from the metamodel (plugins/transfer/model.ts): here, the properties a walk over
 * a tree reads without (unusedProperties), which the download's statements leave out of every object they read.
 * Left out wrongly, a record would lose a property without any error; so every property a record carries or a label
 * is derived from must stay, of every type of the standard metamodel.
 */
import { expect } from 'chai';
import { metamodel } from '../../../generated/metamodel.gen.ts';
import type { Metamodel } from '../../../runtime/host.ts';
import { recordProperties, unusedProperties } from '../../../plugins/transfer/model.ts';

describe('transfer: what a download reads without (unusedProperties)', () => {
  const model = metamodel as unknown as Metamodel;
  const unused = new Set(unusedProperties(model));

  it('keeps every property of every type\'s record and every property a label is derived from', () => {
    for (const [name, type] of Object.entries(model.types)) {
      for (const p of recordProperties(type)) expect(unused.has(p.name), `${name}.${p.name}`).to.equal(false);
      for (const p of type.labelFrom ?? []) expect(unused.has(p), `${name} label from ${p}`).to.equal(false);
    }
  });

  it('leaves out the references to the parent that the nesting says, and what the service keeps for itself', () => {
    for (const p of ['hasDomain', 'inCollection', 'inScheme', 'password']) expect(unused.has(p), p).to.equal(true);
    // The columns a record takes its label, title, description and status from are not properties of `props`.
    for (const p of ['label', 'title', 'description', 'status']) expect(unused.has(p), p).to.equal(false);
  });
});
