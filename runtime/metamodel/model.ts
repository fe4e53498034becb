/**
 * The metamodel's types: the raw form (the checked-in definition, the `meta`
 * database) and the resolved `Metamodel` that `resolve.ts` makes of it, which
 * the emitters work on and the generator emits for the runtime. Handwritten
 * code depends only on these interfaces; the module imports nothing.
 */

export type DataType =
  | 'STRING' | 'TEXT' | 'INTEGER' | 'DECIMAL' | 'BOOLEAN' | 'UUID' | 'DATETIME'
  | 'ENUMERATION' | 'REFERENCE' | 'LIST' | 'INVERSE' | 'RECORDS';

export const DATA_TYPES: DataType[] = [
  'STRING', 'TEXT', 'INTEGER', 'DECIMAL', 'BOOLEAN', 'UUID', 'DATETIME',
  'ENUMERATION', 'REFERENCE', 'LIST', 'INVERSE', 'RECORDS',
];

/** Data types a field of a record may have: single values, nothing that names or holds other objects. */
export const FIELD_DATA_TYPES: DataType[] = ['STRING', 'TEXT', 'INTEGER', 'DECIMAL', 'BOOLEAN', 'UUID', 'DATETIME', 'ENUMERATION'];

/** A property as written in the checked-in definition (and stored in `meta`). */
export interface RawProperty {
  dataType: DataType;
  range?: string;
  required?: 'MANDATORY' | 'OPTIONAL';
  cardinality?: 'ONE' | 'MANY';
  readOnly?: boolean;
  writeOnly?: boolean;
  owner?: boolean;
  default?: string;
  inverseOf?: string;
  description?: string;
}

export interface RawType {
  supertype?: string;
  plural?: string;
  abstract?: boolean;
  root?: boolean;
  labelFrom?: string;
  /** Kinds of model (ModelType literals, separated by blanks) whose schemes may hold objects of the type; none: every kind. */
  modelTypes?: string;
  description?: string;
  properties?: Record<string, RawProperty>;
}

/** The structure of the records a RECORDS property holds. */
export interface RawRecord {
  description?: string;
  fields: Record<string, RawProperty>;
}

export interface RawMetamodel {
  enumerations: Record<string, { description?: string; literals: string[] }>;
  /** Structures of records (e.g. a time series' entries); absent where there are none. */
  records?: Record<string, RawRecord>;
  types: Record<string, RawType>;
}

/** A resolved property of a type (inherited ones included). */
export interface PropertyDef {
  name: string;
  dataType: Exclude<DataType, 'LIST' | 'INVERSE'>;
  /** Target type of a REFERENCE, enumeration name of an ENUMERATION, record structure of RECORDS. */
  range?: string;
  values?: string[];
  /** RECORDS: the fields of each record, sorted by name (their `declaredBy` is the record structure). */
  fields?: PropertyDef[];
  required: boolean;
  many: boolean;
  readOnly: boolean;
  writeOnly: boolean;
  owner: boolean;
  default?: string;
  description?: string;
  declaredBy: string;
}

/** A list below an object of a type: its children, or an inverse view. */
export interface ListDef {
  name: string;
  itemType: string;
  /** Concrete types an item may have. */
  itemTypes: string[];
  /** For INVERSE lists: the reference property of the items naming this object. */
  inverseOf?: string;
  description?: string;
  declaredBy: string;
}

export interface TypeDef {
  name: string;
  plural: string;
  supertype?: string;
  abstract: boolean;
  root: boolean;
  labelFrom?: string[];
  description?: string;
  /** The chain of supertypes, nearest first. */
  supertypes: string[];
  /** Concrete types reachable through this type's plural (itself included if concrete). */
  concreteTypes: string[];
  properties: PropertyDef[];
  lists: ListDef[];
  /**
   * The writable parent references (decisions §7.1): reference properties
   * that name the object's parent, one per kind of parent, at most one set
   * (the one naming the current parent). Writing one moves the object.
   * Sorted by property name; empty where the type has none.
   */
  owners: OwnerDef[];
  /** Kinds of model (`modelType` of the scheme above) that may hold objects of the type; absent: every kind. */
  modelTypes?: string[];
}

/** A parent reference: its property, and the concrete types of the parents it names. */
export interface OwnerDef {
  property: string;
  /** The reference's range. */
  range: string;
  /** Concrete types of the range that hold objects of this type in a child list. */
  parentTypes: string[];
}

/** The parent reference of a type that names a parent of the given type, if any. */
export function ownerFor(type: TypeDef, parentType: string): OwnerDef | undefined {
  return type.owners.find((o) => o.parentTypes.includes(parentType));
}

export interface Metamodel {
  types: Record<string, TypeDef>;
  /** Plural (path segment) to type name. */
  plurals: Record<string, string>;
  /** Top-level lists whose objects stand at the root (schemes, organizations, tenants, users). */
  rootLists: Record<string, string>;
  enumerations: Record<string, string[]>;
}

/** The enumeration of the kinds of model; a root object's property of this range is its kind (a scheme's `modelType`). */
export const MODEL_TYPES = 'ModelType';

/** Properties kept in columns of the objects table rather than in `props`. */
export const SYSTEM_PROPERTIES = [
  'id', '_version', 'tenant', 'createdBy', 'dateCreated', 'modifiedBy', 'dateModified',
  'db', 'label', 'title', 'description', 'status', 'modelId', 'parentId', 'href',
] as const;

/** System properties a client may write. */
export const WRITABLE_SYSTEM_PROPERTIES = ['label', 'title', 'description', 'status'] as const;
