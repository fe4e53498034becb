/**
 * Emits `validators.gen.ts`: one precompiled ajv validator per concrete type.
 * A validator checks the writable state of an object after the runtime has
 * merged the payload (PUT: the payload; PATCH: stored state + payload), so
 * read-only properties never appear in it and unset means absent or null.
 */
import { Ajv } from 'ajv';
import type { SchemaObject } from 'ajv';
import standaloneModule from 'ajv/dist/standalone/index.js';
import type { Metamodel, TypeDef } from '../../runtime/metamodel/model.ts';
import { header } from '../emitter.ts';
import { isMandatory, writePropertySchema } from '../property-kinds.ts';
import type { Emitter } from '../emitter.ts';

// Both packages are CommonJS: under ESM the default import is `module.exports`,
// whose `default` is the function (this also holds for the TypeScript types).
const standaloneCode = standaloneModule.default;

const sortedByKey = <T>(record: Record<string, T>) =>
  Object.fromEntries(Object.keys(record).sort().map((k) => [k, record[k]]));

/** JSON Schema of the writable state of a concrete type; also usable by other emitters. */
export function writableStateSchema(t: TypeDef): SchemaObject {
  const properties: Record<string, SchemaObject> = {
    // `_type` may stay in the merged state; it must then name this type.
    _type: { const: t.name },
    // Custom properties depend on the tenant's annotations and are checked elsewhere.
    customProperties: { anyOf: [{ type: 'object' }, { type: 'null' }] },
  };
  const required: string[] = [];
  for (const p of t.properties.filter((x) => !x.readOnly)) {
    properties[p.name] = writePropertySchema(t, p);
    if (isMandatory(t, p)) required.push(p.name);
  }
  return { type: 'object', properties: sortedByKey(properties), required: required.sort(), additionalProperties: false };
}

const validatorName = (typeName: string) => `validate${typeName}`;

/** A deep import into a package without an exports map needs its file extension under ESM. */
function esmSpecifier(module: string): string {
  const segments = module.split('/');
  const packageSegments = module.startsWith('@') ? 2 : 1;
  const deep = segments.length > packageSegments;
  return deep && !/\.[cm]?js$/.test(module) ? `${module}.js` : module;
}

/**
 * ajv's standalone code loads its runtime helpers with `require("…")`, which
 * does not exist in an ES module. Each becomes a default import (under ESM
 * that is `module.exports`, the value `require` returns).
 */
function replaceRequires(code: string): { imports: string[]; code: string } {
  const modules = [...new Set([...code.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]))].sort();
  const imports = modules.map((m, i) => `import ajvRuntime${i} from ${JSON.stringify(esmSpecifier(m))};`);
  const replaced = code.replace(/require\("([^"]+)"\)/g, (_, m: string) => `ajvRuntime${modules.indexOf(m)}`);
  return { imports, code: replaced };
}

function emitValidators(model: Metamodel): string {
  const ajv = new Ajv({ allErrors: true, strict: true, code: { source: true, esm: true, lines: true } });
  // The formats tell readers of the OpenAPI document what a value is; what is
  // checked is stated beside them (the uuid's pattern, an int64's minimum and maximum).
  ajv.addFormat('uuid', true);
  ajv.addFormat('int64', true);
  const concrete = Object.keys(model.types).filter((n) => !model.types[n].abstract).sort();
  for (const name of concrete) ajv.addSchema(writableStateSchema(model.types[name]), name);
  const standalone = standaloneCode(ajv, Object.fromEntries(concrete.map((n) => [validatorName(n), n])));
  const { imports, code } = replaceRequires(standalone.replace(/^"use strict";\n?/, ''));
  return [
    header('validators'),
    // ajv's generated code is untyped JavaScript.
    '// @ts-nocheck',
    "import type { WritableStateGuard } from '../runtime/validation.ts';",
    "import type { WritableStates } from './models.gen.ts';",
    ...imports,
    code.trimEnd(),
    '',
    '/** Validators of the writable state, by concrete type name: type guards of the states in models.gen.ts. */',
    'export const validators: { [T in keyof WritableStates]: WritableStateGuard<WritableStates[T]> } = {',
    ...concrete.map((n) => `  ${n}: ${validatorName(n)},`),
    '};',
    '',
  ].join('\n');
}

export const validatorsEmitter: Emitter = {
  name: 'validators',
  emit: (model) => [{ path: 'validators.gen.ts', content: emitValidators(model) }],
};
