/**
 * Emits `models.gen.ts`: the TypeScript interfaces of the metadata objects,
 * `<Type>` for the read form (HAL, as returned by GET) and `<Type>Write` for
 * the write form of each concrete type (the payload of POST, PUT and PATCH);
 * and for the runtime, `<Type>State`, the writable state the generated
 * validator of the type admits (its type guard narrows to it), and
 * `<Type>Properties`, what the objects table keeps in `props`. The maps
 * `WritableStates` and `StoredProperties` name them by type, so handwritten
 * code that uses a property stops compiling when the metamodel drops it.
 */
import { IndentationText, Project, QuoteKind } from 'ts-morph';
import type { OptionalKind, PropertySignatureStructure, SourceFile } from 'ts-morph';
import type { Metamodel, TypeDef } from '../../runtime/metamodel/model.ts';
import { SYSTEM_PROPERTIES } from '../../runtime/metamodel/model.ts';
import { header } from '../emitter.ts';
import { isMandatory, literalUnion, propertyTypescript, writePropertyTypescript } from '../property-kinds.ts';
import type { Emitter } from '../emitter.ts';

type Property = OptionalKind<PropertySignatureStructure>;

const literal = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
// A description must not end the doc comment it is printed in.
const docs = (description?: string) => (description ? [description.replace(/\*\//g, '*\\/')] : []);

/**
 * Read form: the properties the type declares itself (the rest comes with
 * the supertype's interface); `_type` narrows to the concrete types reachable
 * through this type. Write-only properties are never returned.
 */
function readProperties(t: TypeDef): Property[] {
  const own = t.properties
    .filter((p) => p.declaredBy === t.name && !p.writeOnly)
    .map((p): Property => ({
      name: p.name, type: propertyTypescript(p), hasQuestionToken: !p.required, docs: docs(p.description),
    }));
  const typeProperty: Property = { name: '_type', type: literalUnion(t.concreteTypes) };
  if (t.supertype) return [typeProperty, ...own];
  return [
    typeProperty,
    ...own,
    { name: 'customProperties', type: 'Record<string, unknown>', hasQuestionToken: true },
    { name: '_links', type: 'Links' },
  ];
}

/**
 * Write form: every property is optional (PATCH gives only what changes);
 * an optional one may be null to unset it, as the validators accept.
 */
function writeProperties(t: TypeDef): Property[] {
  const writable = t.properties.filter((p) => !p.readOnly).map((p): Property => {
    return { name: p.name, type: writePropertyTypescript(t, p), hasQuestionToken: true, docs: docs(p.description) };
  });
  return [
    { name: '_type', type: literal(t.name) },
    ...writable,
    { name: 'customProperties', type: 'Record<string, unknown> | null', hasQuestionToken: true },
  ];
}

/**
 * The state a validator admits: the merged payload, so `_type` may be left
 * out, mandatory properties are there, and an optional one may be null.
 */
function stateProperties(t: TypeDef): Property[] {
  const writable = t.properties.filter((p) => !p.readOnly).map((p): Property => {
    const mandatory = isMandatory(t, p);
    return { name: p.name, type: writePropertyTypescript(t, p), hasQuestionToken: !mandatory };
  });
  return [
    { name: '_type', type: literal(t.name), hasQuestionToken: true },
    ...writable,
    { name: 'customProperties', type: 'Record<string, unknown> | null', hasQuestionToken: true },
  ];
}

const SYSTEM = new Set<string>(SYSTEM_PROPERTIES);

/**
 * What a stored object keeps in `props`: every property but the system ones
 * (columns of their own) and the write-only ones (kept by plugins, never
 * stored here). Unset values are absent, never null; a mandatory one is there
 * once a write passed the validator.
 */
function storedProperties(t: TypeDef): Property[] {
  return t.properties.filter((p) => !SYSTEM.has(p.name) && !p.writeOnly)
    .map((p): Property => ({ name: p.name, type: propertyTypescript(p), hasQuestionToken: !p.required }));
}

function addRuntimeForms(file: SourceFile, model: Metamodel) {
  const concrete = Object.values(model.types).filter((t) => !t.abstract).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const t of concrete) {
    file.addInterface({ name: `${t.name}State`, isExported: true, docs: [`Writable state of ${t.name}, as its validator admits it.`], properties: stateProperties(t) });
    file.addInterface({ name: `${t.name}Properties`, isExported: true, docs: [`What a stored ${t.name} keeps in \`props\`.`], properties: storedProperties(t) });
  }
  file.addInterface({
    name: 'WritableStates', isExported: true, docs: ['The writable state of each concrete type.'],
    properties: concrete.map((t) => ({ name: t.name, type: `${t.name}State` })),
  });
  file.addInterface({
    name: 'StoredProperties', isExported: true, docs: ['The stored `props` of each concrete type.'],
    properties: concrete.map((t) => ({ name: t.name, type: `${t.name}Properties` })),
  });
}

function addLinks(file: SourceFile) {
  file.addInterface({
    name: 'Links',
    isExported: true,
    docs: ['HAL links of an object: `self` and one entry per related object or list.'],
    properties: [{ name: 'self', type: '{ href: string }' }],
    indexSignatures: [{ keyName: 'relation', keyType: 'string', returnType: '{ href: string } | undefined' }],
  });
}

function addTypes(file: SourceFile, model: Metamodel) {
  for (const t of Object.values(model.types).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    file.addInterface({
      name: t.name,
      isExported: true,
      extends: t.supertype ? [t.supertype] : [],
      docs: docs(t.description),
      properties: readProperties(t),
    });
    if (t.abstract) continue;
    file.addInterface({
      name: `${t.name}Write`,
      isExported: true,
      docs: [`Write form of ${t.name}.`],
      properties: writeProperties(t),
    });
  }
}

function addTypeNames(file: SourceFile, model: Metamodel) {
  const concrete = Object.keys(model.types).filter((n) => !model.types[n].abstract).sort();
  file.addTypeAlias({ name: 'TypeName', isExported: true, type: literalUnion(concrete) });
  file.addStatements(`export const typeNames = [${concrete.map(literal).join(', ')}] as const;`);
}

function emitModels(model: Metamodel): string {
  const project = new Project({
    useInMemoryFileSystem: true,
    manipulationSettings: { indentationText: IndentationText.TwoSpaces, quoteKind: QuoteKind.Single },
  });
  const file = project.createSourceFile('models.gen.ts');
  addLinks(file);
  addTypeNames(file, model);
  addTypes(file, model);
  addRuntimeForms(file, model);
  return `${header('models')}\n${file.getFullText()}`;
}

export const modelsEmitter: Emitter = {
  name: 'models',
  emit: (model) => [{ path: 'models.gen.ts', content: emitModels(model) }],
};
