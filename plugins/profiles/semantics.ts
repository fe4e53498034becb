/**
 * Checks a well-shaped profile document against the metamodel: every
 * property and group it names exists, a type extends a type without going
 * round in a circle, literals and defaults are values of their property or
 * base type, widths are widths, and no custom property is declared twice
 * where both could apply. Typos must not pass silently (decisions §6), so
 * each is a problem with its line and column. Types known later
 * (vocabulary.ts) are not looked into: the metamodel has nothing to check
 * them against yet.
 */
import type { Metamodel, PropertyDef, TypeDef, Violation } from '../../runtime/host.ts';
import type { Locator } from './document.ts';
import { baseTypeOf, WIDTH, type BaseType, type ProfileKind } from './schema.ts';
import { checkScalar, entriesOf, LITERAL_BASE_TYPES, literalText } from './values.ts';
import { declaredNames } from './status-rules.ts';
import { KIND_TYPE } from './rules.ts';
import { annotationChain, extendsIn, laterTypes, nearestType, reaches, type ExtendsOf, type TopLevel } from './vocabulary.ts';

type Path = (string | number)[];
type Definition = Record<string, unknown>;

/** Names of custom properties: letters (any language), digits and `_`, starting with a letter. */
export const CUSTOM_PROPERTY_NAME = /^\p{L}[\p{L}\p{N}_]*$/u;

/**
 * Statuses a document may label beyond the standard ones (decisions §7.2): a
 * profile those it declares; annotations none (typos must not pass silently,
 * and the profile that declares statuses is uploaded on its own).
 */
type ExtraStatuses = Set<string>;

const isStatus = (property: PropertyDef) => property.dataType === 'ENUMERATION' && property.range === 'Status';

/** Literals of standard properties: which data types can have them, and which literals each allows. */
function propertyLiteral(property: PropertyDef, literal: string, extra: ExtraStatuses): 'ok' | 'notInEnumeration' | 'invalid' {
  switch (property.dataType) {
    case 'ENUMERATION':
      if (property.values?.includes(literal)) return 'ok';
      if (isStatus(property) && extra.has(literal)) return 'ok';
      return 'notInEnumeration';
    case 'BOOLEAN':
      return literal === 'true' || literal === 'false' ? 'ok' : 'invalid';
    case 'INTEGER':
    case 'DECIMAL':
      return literalText(property.dataType, literal) === null ? 'invalid' : 'ok';
    default:
      return 'ok';
  }
}

const PROPERTY_LITERAL_TYPES = new Set(['ENUMERATION', 'BOOLEAN', 'INTEGER', 'DECIMAL', 'STRING', 'TEXT']);

/** Whether a default fits a standard property: a value of its enumeration, a flag, a number, a text. */
function propertyDefault(property: PropertyDef, value: unknown): boolean {
  switch (property.dataType) {
    case 'ENUMERATION':
      return property.values?.includes(String(value)) ?? false;
    case 'BOOLEAN':
      return typeof value === 'boolean';
    case 'INTEGER':
      return Number.isSafeInteger(value);
    case 'DECIMAL':
      return typeof value === 'number' && Number.isFinite(value);
    case 'STRING':
    case 'TEXT':
      // YAML reads `default: 10` as a number; as a text's default it means "10".
      return typeof value === 'string' || typeof value === 'number';
    default:
      return false;
  }
}

const isWidth = (value: unknown) => (typeof value === 'number' ? Number.isFinite(value) && value > 0 : typeof value === 'string' && WIDTH.test(value));

class Checker {
  readonly violations: Violation[] = [];
  private readonly extendsOf: ExtendsOf;
  private readonly extraStatuses: ExtraStatuses;

  constructor(private readonly kind: ProfileKind, private readonly document: Definition, private readonly model: Metamodel, private readonly at: Locator, private readonly top: TopLevel) {
    this.extendsOf = extendsIn(document);
    this.extraStatuses = new Set(kind === 'profile' ? declaredNames(document) : []);
  }

  private report(path: Path, key: string, params: Record<string, unknown>, where: 'key' | 'value' = 'key') {
    this.violations.push({ path: path.join('.'), key, params: { ...this.at(path, where), ...params } });
  }

  run() {
    for (const key of this.top.types) this.checkType(this.model.types[key], (this.document[key] as Definition | null) ?? {});
    // A model kind's entry applies to the schemes of that kind, on top of Scheme's (decisions §7.1): checked as Scheme's would be.
    const kinds = new Set(this.model.enumerations.ModelType ?? []);
    if (Object.hasOwn(this.model.types, KIND_TYPE)) {
      for (const key of this.top.later) {
        if (kinds.has(key)) this.checkType(this.model.types[KIND_TYPE], (this.document[key] as Definition | null) ?? {}, key);
      }
    }
  }

  /** The entries a type has annotations from, itself last (vocabulary.ts); a kind's entry after its type's. */
  private chainOf(type: TypeDef, kind?: string): string[] {
    return [...annotationChain(this.model, type.name, this.extendsOf), ...(kind !== undefined ? [kind] : [])];
  }

  /** Groups a type's properties may name: its own and those of its supertypes' and the extended type's annotations. */
  private groupsOf(type: TypeDef, kind?: string): Set<string> {
    const groups = new Set<string>();
    for (const name of this.chainOf(type, kind)) {
      for (const g of entriesOf((this.document[name] as Definition | null)?.groups)) groups.add(g.name);
    }
    return groups;
  }

  /** Custom properties the type has from its supertypes' and the extended type's annotations, always (not by literal). */
  private inherited(type: TypeDef, kind?: string): Set<string> {
    const names = new Set<string>();
    for (const name of this.chainOf(type, kind)) {
      if (name === (kind ?? type.name)) continue;
      for (const c of entriesOf((this.document[name] as Definition | null)?.customProperties)) names.add(c.name);
    }
    return names;
  }

  private checkExtends(type: TypeDef, definition: Definition, base: Path) {
    const extended = definition.extends;
    if (typeof extended !== 'string') return;
    const path = [...base, 'extends'];
    const later = laterTypes(this.model);
    if (!Object.hasOwn(this.model.types, extended) && !later.has(extended)) {
      this.report(path, 'profileUnknownExtends', { value: extended, suggestion: nearestType(extended, [...Object.keys(this.model.types), ...later]) }, 'value');
    } else if (Object.hasOwn(this.model.types, extended) && reaches(this.model, extended, type.name, this.extendsOf)) {
      this.report(path, 'profileExtendsCycle', { value: extended, type: type.name }, 'value');
    }
  }

  /** Standard properties and lists of a type's entry (or of one of its stereotypes). */
  private checkProperties(type: TypeDef, groups: Set<string>, set: unknown, base: Path) {
    for (const p of entriesOf(set)) {
      const path = [...base, 'properties', p.segment];
      const property = type.properties.find((d) => d.name === p.name);
      const list = type.lists.find((l) => l.name === p.name);
      if (!property && !list) {
        this.report(path, 'profileUnknownProperty', { type: type.name, value: p.name });
        continue;
      }
      this.checkGroup(type, groups, p.definition, path);
      this.checkWidth(p.definition, path);
      if (p.definition?.default !== undefined && (!property || !propertyDefault(property, p.definition.default))) {
        this.report([...path, 'default'], 'profileInvalidDefault', { value: String(p.definition.default), dataType: property?.dataType ?? 'LIST' }, 'value');
      }
      if (p.definition?.literals !== undefined) this.checkPropertyLiterals(type, groups, property, p.definition.literals, path);
    }
  }

  private checkWidth(definition: Definition | null, path: Path) {
    if (definition?.width !== undefined && !isWidth(definition.width)) this.report([...path, 'width'], 'profileInvalidWidth', { value: String(definition.width) }, 'value');
  }

  /** `kind`: the entry is that of a model kind, whose objects are of this type. */
  private checkType(type: TypeDef, definition: Definition, kind?: string) {
    const groups = this.groupsOf(type, kind);
    const base: Path = [kind ?? type.name];
    // A kind has its type's annotations anyway: its `extends` (the original product writes `extends: Scheme`) is kept, not applied.
    if (kind === undefined) this.checkExtends(type, definition, base);
    this.checkProperties(type, groups, definition.properties, base);
    const stereotypes = entriesOf(definition.stereotypes);
    for (const s of stereotypes) this.checkProperties(type, groups, s.definition?.properties, [...base, 'stereotypes', s.segment]);
    const declared = new Map<string, Path>();
    const always = new Set([...this.inherited(type, kind), ...entriesOf(definition.customProperties).map((c) => c.name)]);
    this.checkCustomProperties(type, groups, definition.customProperties, [...base, 'customProperties'], declared, always, false);
    // Literal-specific custom properties of standard properties, after the type's own are known.
    for (const p of entriesOf(definition.properties)) {
      for (const l of entriesOf(p.definition?.literals)) {
        const path = [...base, 'properties', p.segment, 'literals', l.segment, 'customProperties'];
        this.checkCustomProperties(type, groups, l.definition?.customProperties, path, declared, always, true);
      }
    }
    // A stereotype's custom properties apply while the object has that stereotype: alternatives, as under literals.
    // A profile's only place custom properties declared elsewhere, so they may name one the type always has.
    for (const s of stereotypes) {
      this.checkCustomProperties(type, groups, s.definition?.customProperties, [...base, 'stereotypes', s.segment, 'customProperties'], declared, always, this.kind === 'annotations');
    }
  }

  private checkGroup(type: TypeDef, groups: Set<string>, definition: Definition | null, path: Path) {
    const group = definition?.group;
    if (typeof group === 'string' && !groups.has(group)) this.report([...path, 'group'], 'profileUnknownGroup', { type: type.name, value: group }, 'value');
  }

  private checkPropertyLiterals(type: TypeDef, groups: Set<string>, property: PropertyDef | undefined, literals: unknown, path: Path) {
    if (!property || !PROPERTY_LITERAL_TYPES.has(property.dataType)) {
      this.report([...path, 'literals'], 'profileLiteralsNotPossible', { dataType: property?.dataType ?? 'LIST' });
      return;
    }
    for (const l of entriesOf(literals)) {
      const verdict = propertyLiteral(property, l.name, this.extraStatuses);
      const at = [...path, 'literals', l.segment];
      if (verdict === 'notInEnumeration') {
        const extra = isStatus(property) ? [...this.extraStatuses].sort().filter((s) => !property.values?.includes(s)) : [];
        this.report(at, 'profileLiteralNotInEnumeration', { value: l.name, property: property.name, allowed: [...(property.values ?? []), ...extra].join(', ') });
      } else if (verdict === 'invalid') {
        this.report(at, 'profileInvalidLiteral', { value: l.name, baseType: property.dataType });
      }
    }
  }

  /**
   * `declared`: every custom property of this type annotation met so far,
   * with its path; `always`: the names the type has without a literal. A
   * literal-specific custom property may not repeat either: which of the two
   * would apply could not be told. Alternatives under different literals may
   * share a name.
   */
  private checkCustomProperties(type: TypeDef, groups: Set<string>, set: unknown, path: Path, declared: Map<string, Path>, always: Set<string>, underLiteral: boolean) {
    for (const c of entriesOf(set)) {
      const at = [...path, c.segment];
      if (!CUSTOM_PROPERTY_NAME.test(c.name)) this.report(at, 'profileInvalidName', { value: c.name });
      const earlier = declared.get(c.name);
      if (underLiteral && (always.has(c.name) || (earlier && !isAlternative(earlier, at)))) {
        const other = earlier ?? at;
        this.report(at, 'profileDeclaredTwice', { value: c.name, type: type.name, otherLine: this.at(other, 'key').line });
      }
      if (!earlier) declared.set(c.name, at);
      this.checkGroup(type, groups, c.definition, at);
      this.checkWidth(c.definition, at);
      if (this.kind !== 'annotations') continue;
      const baseType = baseTypeOf(c.definition);
      if (baseType === 'ID' && c.definition?.cardinality === 'MANY') this.report([...at, 'cardinality'], 'profileIdNotMany', { value: c.name }, 'value');
      if (baseType === 'ENUM' && !entriesOf(c.definition?.literals).length) this.report(at, 'profileEnumWithoutLiterals', { value: c.name });
      if (c.definition?.default !== undefined) this.checkCustomDefault(c.definition, baseType, at);
      if (!c.definition || c.definition.literals === undefined) continue;
      if (!LITERAL_BASE_TYPES.has(baseType)) {
        this.report([...at, 'literals'], 'profileLiteralsNotPossible', { dataType: baseType });
        continue;
      }
      for (const l of entriesOf(c.definition.literals)) {
        const literalPath = [...at, 'literals', l.segment];
        if (literalText(baseType, l.name) === null) this.report(literalPath, 'profileInvalidLiteral', { value: l.name, baseType });
        this.checkCustomProperties(type, groups, l.definition?.customProperties, [...literalPath, 'customProperties'], declared, always, true);
      }
    }
  }

  /** A custom property's default is one of its values: of its base type, and one of its literals where it has some. */
  private checkCustomDefault(definition: Definition, baseType: BaseType, at: Path) {
    const value = definition.default;
    const checked = checkScalar(baseType, value);
    const literals = definition.literals === undefined ? null : entriesOf(definition.literals).map((l) => literalText(baseType, l.name));
    const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : null;
    const fits = checked.ok && (!literals || (text !== null && literals.includes(literalText(baseType, text))));
    if (!fits) this.report([...at, 'default'], 'profileInvalidDefault', { value: String(value), dataType: baseType }, 'value');
  }
}

/** Where a path last goes into one of several alternatives: a literal, or a stereotype. */
function lastChoice(path: Path): number {
  return Math.max(path.lastIndexOf('literals'), path.lastIndexOf('stereotypes'));
}

/** Two declarations under different literals of the same property, or under different stereotypes, are alternatives. */
function isAlternative(a: Path, b: Path): boolean {
  const la = lastChoice(a);
  const lb = lastChoice(b);
  if (la < 0 || lb < 0 || la !== lb) return false;
  return a.slice(0, la + 1).join('\u0000') === b.slice(0, lb + 1).join('\u0000') && a[la + 1] !== b[lb + 1];
}

export function checkAgainstMetamodel(kind: ProfileKind, document: Definition, model: Metamodel, at: Locator, top: TopLevel): Violation[] {
  const checker = new Checker(kind, document, model, at, top);
  checker.run();
  return checker.violations;
}
