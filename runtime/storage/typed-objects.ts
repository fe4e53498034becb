/**
 * Stored objects typed by the generated models. The objects table is
 * generic (`props` is whatever the metamodel gives a type), but where
 * handwritten code reads or makes the properties of a particular type — a
 * user's login ID, a person's names — it goes through these types, so the
 * generated models are the contract between the metamodel and the code.
 *
 * How that shows: rename `loginId` of `User` in
 * runtime/metamodel/standard-metamodel.yaml, run `npm run generate --
 * --standard`, and `npx tsc -p tsconfig.json --noEmit` names every use
 * (runtime/auth/user-writes.ts, rule-users.ts …) instead of the service
 * failing at run time. The check is a string comparison: nothing is copied.
 */
import type { StoredProperties } from '../../generated/models.gen.ts';
import type { StoredObject } from './objects.ts';

export type TypeWithProperties = keyof StoredProperties;

/** A stored object of one concrete type, its `props` as the generated `<Type>Properties`. */
export type ObjectOf<T extends TypeWithProperties> = StoredObject<StoredProperties[T] & Record<string, unknown>> & { type: T };

/** Whether a stored object is of the concrete type (not a subtype: each has its own properties). */
export function isObjectOf<T extends TypeWithProperties>(o: StoredObject, type: T): o is ObjectOf<T> {
  return o.type === type;
}

/**
 * The name of a stored property, for SQL that reads `props` (`props->>'loginId'`):
 * checked against the generated models like any other use. Names are the
 * metamodel's (letters and digits), so they may stand in an SQL literal.
 */
export function storedPropertyName<T extends TypeWithProperties>(_type: T, name: keyof StoredProperties[T] & string): string {
  return name;
}
