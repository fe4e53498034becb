/**
 * Turns the directory entry found for a login ID into what the core needs to
 * assign a user: the attributes named by SERVICE_JNDI_GROUP_ID,
 * SERVICE_JNDI_TENANT_ID, SERVICE_JNDI_COMMON_NAME, SERVICE_JNDI_FAMILY_NAME,
 * SERVICE_JNDI_GIVEN_NAME and SERVICE_JNDI_TENANT_NAME.
 */
import type { ExternalIdentity } from '../../runtime/host.ts';
import type { AttributeNames } from './settings.ts';

type AttributeValue = string | string[] | Buffer | Buffer[];
export type DirectoryEntry = { dn: string; [attribute: string]: AttributeValue };

/** The attributes to ask the directory for (the login attribute too); `1.1` asks for none (RFC 4511). */
export function requestedAttributes(names: AttributeNames, login?: string): string[] {
  const wanted = [...new Set([...Object.values(names), login].filter((n): n is string => !!n))];
  return wanted.length ? wanted : ['1.1'];
}

/** As a directory's caseIgnoreMatch compares: case, and spaces at the ends and in runs, do not count. */
const folded = (text: string) => text.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase();

/** Every value of an attribute, looked up as LDAP does: the name regardless of case. */
function valuesOf(entry: DirectoryEntry, name: string | undefined): string[] {
  if (!name) return [];
  const key = Object.keys(entry).find((k) => k !== 'dn' && k.toLowerCase() === name.toLowerCase());
  if (key === undefined) return [];
  const raw = entry[key];
  const list = Array.isArray(raw) ? raw : [raw];
  return list.map((v) => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v)).trim()).filter((v) => v !== '');
}

/** A single-valued part takes the first value; a directory may hold more, which says nothing more. */
function firstOf(entry: DirectoryEntry, name: string | undefined): string | undefined {
  return valuesOf(entry, name)[0];
}

/**
 * The login ID is the entry's own value of the filter's login attribute
 * that the typed one matched: the directory matches `ALICE` or ` alice` to
 * alice's entry, and the service must then find alice's user, not treat the
 * caller as someone without a user whom the access rules might let in.
 * Without a login attribute (or a value that matches), the typed login ID.
 */
export function identityOf(entry: DirectoryEntry, typed: string, names: AttributeNames, login?: string): ExternalIdentity {
  const own = login ? valuesOf(entry, login) : [];
  const loginId = own.find((v) => v === typed) ?? own.find((v) => folded(v) === folded(typed)) ?? typed;
  const identity: ExternalIdentity = { loginId };
  const groups = [...new Set(valuesOf(entry, names.groups))];
  if (names.groups) identity.groups = groups;
  const parts: [Exclude<keyof AttributeNames, 'groups'>, string | undefined][] = [
    ['tenantId', firstOf(entry, names.tenantId)],
    ['commonName', firstOf(entry, names.commonName)],
    ['familyName', firstOf(entry, names.familyName)],
    ['givenName', firstOf(entry, names.givenName)],
    ['tenantName', firstOf(entry, names.tenantName)],
  ];
  for (const [part, value] of parts) if (value !== undefined) identity[part] = value;
  return identity;
}
