/**
 * The validators and the OpenAPI document state one contract: for every
 * concrete type and every writable property, the generated validator
 * (generated/validators.gen.ts) and the document's write schema for that
 * property (generated/openapi.gen.json, checked the way a client generated
 * from it would check) accept and refuse the same values. The probes sit on
 * both sides of every limit the property kinds set, so a limit changed in one
 * emitter only, or stated by one and not the other, fails here.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import { PROPERTY_KINDS, STRING_MAX_LENGTH, TEXT_MAX_LENGTH } from '../../generator/property-kinds.ts';
import { DEFAULT_GENERATED_DIR } from '../../runtime/config.ts';
import { loadGenerated } from '../../runtime/generated.ts';
import type { Validators } from '../../runtime/rest/writer.ts';
import { DATA_TYPES } from '../../runtime/metamodel/model.ts';
import type { Metamodel, PropertyDef } from '../../runtime/metamodel/model.ts';
import { resolveMetamodel } from '../../runtime/metamodel/resolve.ts';
import { readStandardMetamodel } from '../../runtime/metamodel/standard.ts';
import { STATUS_NAME_PATTERN } from '../../generator/emitters/openapi/schemas.ts';

const addFormats = formatsModule.default;
type Schema = Record<string, unknown>;
const document = JSON.parse(readFileSync(new URL('../../generated/openapi.gen.json', import.meta.url), 'utf8'));
const model: Metamodel = resolveMetamodel(readStandardMetamodel());

const text = (length: number) => 'x'.repeat(length);
const UUID = '0b7e3b0c-8f6a-4c2e-9d1a-5e4f3a2b1c0d';

/** Values on both sides of every limit, and of every other kind. */
function scalarProbes(p: PropertyDef): unknown[] {
  return [
    '', 'x', text(STRING_MAX_LENGTH), text(STRING_MAX_LENGTH + 1), text(TEXT_MAX_LENGTH), text(TEXT_MAX_LENGTH + 1),
    UUID, UUID.toUpperCase(), `urn:uuid:${UUID}`, `${UUID}x`, 'not-a-uuid',
    0, -1, 1.5, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER - 2,
    8.64e15, 8.64e15 + 1, -8.64e15, -8.64e15 - 1, 1764100000000,
    true, false, {}, ...(p.values ?? []), 'NOT_A_LITERAL',
  ];
}

/** A list of records: each field of a record on both sides of its limits, a record with a field too many, and what is no record. */
function recordProbes(p: PropertyDef): unknown[] {
  const filled = Object.fromEntries((p.fields ?? []).filter((f) => f.required).map((f) => [f.name, 'x']));
  const records = (p.fields ?? []).flatMap((f) => [null, ...scalarProbes(f)].map((v) => [{ ...filled, [f.name]: v }]));
  return [null, [], [filled], [{}], ['x'], [{ ...filled, unknownField: 1 }], filled, ...records];
}

function probes(p: PropertyDef): unknown[] {
  if (p.dataType === 'RECORDS') return recordProbes(p);
  const scalars = scalarProbes(p);
  return [null, ...(p.many ? [[], ...scalars.map((v) => [v]), scalars.slice(0, 3)] : scalars), [UUID]];
}

function openapiChecker() {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats(ajv);
  return ajv;
}

/** A state the validator accepts: every mandatory property set to a value the OpenAPI schema accepts too. */
function validBase(typeName: string, writeSchema: (name: string) => (v: unknown) => boolean): Record<string, unknown> {
  const base: Record<string, unknown> = { _type: typeName, label: 'x' };
  for (const p of model.types[typeName].properties.filter((x) => x.required && !x.readOnly)) {
    const accepts = writeSchema(p.name);
    base[p.name] = probes(p).find((v) => v !== null && accepts(v) && (!Array.isArray(v) || v.length));
  }
  return base;
}

describe('property kinds: the validators and the OpenAPI document agree', () => {
  const ajv = openapiChecker();
  let validators: Validators;
  // Loaded as the runtime loads them.
  before(async () => { ({ validators } = await loadGenerated(DEFAULT_GENERATED_DIR)); });
  const concrete = Object.keys(model.types).filter((n) => !model.types[n].abstract).sort();

  it('has one kind for every data type that is a value', () => {
    expect(Object.keys(PROPERTY_KINDS).sort()).to.deep.equal(DATA_TYPES.filter((d) => d !== 'LIST' && d !== 'INVERSE').sort());
  });

  for (const typeName of concrete) {
    it(`accept and refuse the same values for every writable property of ${typeName}`, () => {
      const writeSchema = document.components.schemas[`${typeName}Write`] as { properties: Record<string, Schema> };
      const compiled = new Map<string, (v: unknown) => boolean>();
      const openapiAccepts = (name: string) => {
        if (!compiled.has(name)) compiled.set(name, ajv.compile(writeSchema.properties[name]) as (v: unknown) => boolean);
        return compiled.get(name)!;
      };
      const validate = validators[typeName];
      const base = validBase(typeName, openapiAccepts);
      expect(validate(base), `a valid ${typeName}: ${JSON.stringify(validate.errors)}`).to.equal(true);
      const writable = model.types[typeName].properties.filter((p) => !p.readOnly);
      expect(Object.keys(writeSchema.properties).filter((n) => !['_type', 'customProperties'].includes(n)).sort())
        .to.deep.equal(writable.map((p) => p.name).sort());
      for (const p of writable) {
        for (const value of probes(p)) {
          // null unsets: a mandatory property then fails as missing, as PUT without it would.
          const state = { ...base, [p.name]: value };
          const byValidator = validate(state);
          const byDocument = openapiAccepts(p.name)(value);
          const shown = typeof value === 'string' && value.length > 40 ? `${value.length} characters` : JSON.stringify(value);
          // A tenant's profile may declare statuses beyond the enumeration (decisions §7.2): the document admits every name it could declare.
          if (p.range === 'Status' && !byValidator && byDocument) {
            expect(value, `${typeName}.${p.name} = ${shown}: a status a profile could declare`).to.be.a('string').and.match(new RegExp(STATUS_NAME_PATTERN));
            continue;
          }
          expect(byDocument, `${typeName}.${p.name} (${p.dataType}${p.many ? '[]' : ''}) = ${shown}: validator ${byValidator}`).to.equal(byValidator);
        }
      }
    });
  }
});
