/**
 * The custom properties a tenant's annotations declare, compiled per
 * concrete type once per upload, so that checking an object is a few map
 * lookups: what the type, its supertypes and the type it `extends` declare
 * (the nearest declaration wins, the type's own over the extended type's),
 * and what applies only while a property has a literal (a standard property
 * such as `status`, a custom property with literals, or the object's
 * `stereotype`, whose stereotypes are declared under `stereotypes`).
 */
import type { Metamodel } from '../../runtime/host.ts';
import { baseTypeOf, type BaseType } from './schema.ts';
import { entriesOf, literalText } from './values.ts';
import { annotationChain, extendsIn } from './vocabulary.ts';

/**
 * The property a stereotype's custom properties depend on. The metamodel
 * gets it with decisions §7.1; until then no object has a stereotype, and a
 * stereotype's custom properties apply to none.
 */
export const STEREOTYPE_PROPERTY = 'stereotype';

type Definition = Record<string, unknown>;

export interface CustomPropertyRule {
  name: string;
  baseType: BaseType;
  many: boolean;
  mandatory: boolean;
  /** Allowed values as compared text, or null when any value of the base type is allowed. */
  literals: Set<string> | null;
  /** Custom properties that apply while this property has a literal (compared text). */
  dependents: Map<string, CustomPropertyRule[]>;
  /** For an `ID`: the concrete types among whose objects of the tenant a value is unique. */
  scope: string[];
}

export interface TypeRules {
  /** Declared for the type and its supertypes, whatever the object's values. */
  always: Map<string, CustomPropertyRule>;
  /** Declared under literals of standard properties: property → literal → custom properties. */
  byProperty: Map<string, Map<string, CustomPropertyRule[]>>;
}

const EMPTY: TypeRules = { always: new Map(), byProperty: new Map() };

/** The type whose objects have a kind (`modelType`, decisions §7.1): annotations of the kind apply to them on top of the type's. */
export const KIND_TYPE = 'Scheme';
export const KIND_PROPERTY = 'modelType';

/** The kind whose annotations apply to an object of a type: its `modelType` where the type is a scheme. */
export function kindOf(model: Metamodel, typeName: string, state: Record<string, unknown>): string | undefined {
  const type = model.types[typeName];
  if (!type || (type.name !== KIND_TYPE && !type.supertypes.includes(KIND_TYPE))) return undefined;
  const kind = state[KIND_PROPERTY];
  return typeof kind === 'string' && (model.enumerations.ModelType ?? []).includes(kind) ? kind : undefined;
}

export class CompiledAnnotations {
  private readonly byType = new Map<string, TypeRules>();
  private readonly documents: Definition[];

  /**
   * `documents`: parsed annotation documents as stored, each over the ones
   * before (the tenant's, then the profiles a scheme names, in order); types
   * the metamodel no longer has are passed over.
   */
  constructor(documents: Definition | Definition[], private readonly model: Metamodel) {
    this.documents = Array.isArray(documents) ? documents : [documents];
  }

  static readonly none = new CompiledAnnotations([], { types: {}, plurals: {}, rootLists: {}, enumerations: {} });

  /** `kind`: the object's kind (kindOf), whose entry applies on top of the type's own. */
  rulesOf(typeName: string, kind?: string): TypeRules {
    const key = kind === undefined ? typeName : `${typeName}\u0000${kind}`;
    let rules = this.byType.get(key);
    if (!rules) {
      rules = this.compile(typeName, kind);
      this.byType.set(key, rules);
    }
    return rules;
  }

  private compile(typeName: string, kind: string | undefined): TypeRules {
    const type = this.model.types[typeName];
    if (!type || !this.documents.length) return EMPTY;
    const rules: TypeRules = { always: new Map(), byProperty: new Map() };
    const dependOn = (property: string, literal: string, dependents: CustomPropertyRule[]) => {
      if (!dependents.length) return;
      const byLiteral = rules.byProperty.get(property) ?? new Map<string, CustomPropertyRule[]>();
      // A later declaration of the same name (a nearer type, a later document) replaces the earlier one.
      byLiteral.set(literal, [...(byLiteral.get(literal) ?? []).filter((r) => !dependents.some((d) => d.name === r.name)), ...dependents]);
      rules.byProperty.set(property, byLiteral);
    };
    // Farthest first, so that a nearer declaration replaces a farther one; a later document's over an earlier one's.
    const chain = [...annotationChain(this.model, typeName, extendsIn(...this.documents)), ...(kind !== undefined ? [kind] : [])];
    for (const document of this.documents) for (const name of chain) {
      const definition = (Object.hasOwn(document, name) ? document[name] : undefined) as Definition | null | undefined;
      if (!definition || typeof definition !== 'object') continue;
      // An ID is unique within the type that declares it; one reached through `extends` (or a kind's), within the type checked.
      const scope = Object.hasOwn(this.model.types, name) && (type.name === name || type.supertypes.includes(name)) ? this.model.types[name].concreteTypes : type.concreteTypes;
      for (const rule of customRules(definition.customProperties, scope)) rules.always.set(rule.name, rule);
      for (const p of entriesOf(definition.properties)) {
        for (const l of entriesOf(p.definition?.literals)) dependOn(p.name, l.name, customRules(l.definition?.customProperties, scope));
      }
      for (const st of entriesOf(definition.stereotypes)) dependOn(STEREOTYPE_PROPERTY, st.name, customRules(st.definition?.customProperties, scope));
    }
    return rules;
  }
}

/** A custom property without a definition (`name:`) is text, as one without `baseType`. */
function customRules(set: unknown, scope: string[]): CustomPropertyRule[] {
  return entriesOf(set).map(({ name, definition }) => customRule(name, definition ?? {}, scope));
}

function customRule(name: string, definition: Definition, scope: string[]): CustomPropertyRule {
  const baseType: BaseType = baseTypeOf(definition);
  const literals = definition.literals === undefined ? null : entriesOf(definition.literals);
  const dependents = new Map<string, CustomPropertyRule[]>();
  for (const l of literals ?? []) {
    const nested = customRules(l.definition?.customProperties, scope);
    const text = literalText(baseType, l.name);
    if (nested.length && text !== null) dependents.set(text, nested);
  }
  return {
    name,
    baseType,
    many: definition.cardinality === 'MANY',
    mandatory: definition.mandatory === true,
    literals: literals && new Set(literals.map((l) => literalText(baseType, l.name)).filter((t): t is string => t !== null)),
    dependents,
    scope,
  };
}
