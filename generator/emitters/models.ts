/**
 * Emits `models.gen.ts`: the TypeScript interfaces of the metadata objects,
 * `<Type>` for the read form (HAL, as returned by GET) and `<Type>Write` for
 * the write form of each concrete type (the payload of POST, PUT and PATCH).
 */
import { IndentationText, Project, QuoteKind } from 'ts-morph';
import type { OptionalKind, PropertySignatureStructure, SourceFile } from 'ts-morph';
import type { Metamodel, TypeDef } from '../../runtime/metamodel/model.ts';
import { header } from '../emitter.ts';
import { literalUnion, propertyTypescript, writePropertyTypescript } from '../property-kinds.ts';
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
  return `${header('models')}\n${file.getFullText()}`;
}

export const modelsEmitter: Emitter = {
  name: 'models',
  emit: (model) => [{ path: 'models.gen.ts', content: emitModels(model) }],
};
