/**
 * The settings of directory sign-in (specification, method 3), read and
 * checked once at start: a directory that cannot be reached at all, or a
 * filter that cannot find anyone, must stop the start naming the setting,
 * not turn every sign-in into a puzzle.
 *
 * Beyond the specification, in the spirit of JNDI's
 * `com.sun.jndi.ldap.connect.timeout` and `com.sun.jndi.ldap.read.timeout`:
 * SERVICE_JNDI_CONNECT_TIMEOUT and SERVICE_JNDI_READ_TIMEOUT (milliseconds,
 * default 5000 each) bound how long a sign-in waits for the directory.
 */
import { FilterParser } from 'ldapts';
import { ConfigError } from '../../runtime/host.ts';

/** JNDI's standard LDAP context factory: the only one there is outside a Java runtime. */
export const STANDARD_FACTORY = 'com.sun.jndi.ldap.LdapCtxFactory';
export const DEFAULT_FILTER = 'uid={0}';
export const DEFAULT_TIMEOUT_MS = 5_000;

/** Which entry attribute feeds which part of the external identity. */
export interface AttributeNames {
  groups?: string;
  tenantId?: string;
  commonName?: string;
  familyName?: string;
  givenName?: string;
  tenantName?: string;
}

export interface DirectorySettings {
  /** Scheme, host and port only: what the client connects to. */
  url: string;
  searchUser: string;
  searchPassword: string;
  /** Where people are searched: SERVICE_JNDI_CONTEXT below the URL's own name, as JNDI resolves it. */
  searchBase: string;
  /** Filter template with `{0}` for the escaped login ID, in parentheses. */
  filter: string;
  attributes: AttributeNames;
  connectTimeoutMs: number;
  timeoutMs: number;
}

type Env = Record<string, string | undefined>;

const ATTRIBUTE_SETTINGS: [keyof AttributeNames, string][] = [
  ['groups', 'SERVICE_JNDI_GROUP_ID'],
  ['tenantId', 'SERVICE_JNDI_TENANT_ID'],
  ['commonName', 'SERVICE_JNDI_COMMON_NAME'],
  ['familyName', 'SERVICE_JNDI_FAMILY_NAME'],
  ['givenName', 'SERVICE_JNDI_GIVEN_NAME'],
  ['tenantName', 'SERVICE_JNDI_TENANT_NAME'],
];

// An attribute description (RFC 4512): a name or an OID, without options.
const ATTRIBUTE_NAME = /^(?:[A-Za-z][A-Za-z0-9-]*|\d+(?:\.\d+)+)$/;

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function required(env: Env, name: string, why: string): string {
  const value = text(env, name);
  if (value === undefined) throw new ConfigError(name, `is required with SERVICE_JNDI_AUTHENTICATION=true (${why})`);
  return value;
}

function milliseconds(env: Env, name: string): number {
  const value = text(env, name);
  if (value === undefined) return DEFAULT_TIMEOUT_MS;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 600_000) {
    throw new ConfigError(name, 'must be a whole number of milliseconds from 1 to 600000');
  }
  return Number(value);
}

/** `ldap://host:port/base` → the address to connect to and the name searches are relative to. */
function parseUrl(value: string): { url: string; baseDn: string } {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError('SERVICE_JNDI_URL', 'must be an ldap:// or ldaps:// URL, e.g. ldaps://directory.example.org:636');
  }
  if (parsed.protocol !== 'ldap:' && parsed.protocol !== 'ldaps:') {
    throw new ConfigError('SERVICE_JNDI_URL', `must be an ldap:// or ldaps:// URL, not ${parsed.protocol}//`);
  }
  if (!parsed.hostname) throw new ConfigError('SERVICE_JNDI_URL', 'must name the directory server\'s host');
  if (parsed.username || parsed.password) {
    throw new ConfigError('SERVICE_JNDI_URL', 'must not carry credentials; use SERVICE_JNDI_USER and SERVICE_JNDI_PASSWORD');
  }
  if (parsed.search) throw new ConfigError('SERVICE_JNDI_URL', 'must not carry LDAP URL extensions (attributes, scope, filter)');
  let baseDn: string;
  try {
    baseDn = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  } catch {
    throw new ConfigError('SERVICE_JNDI_URL', 'has a malformed name after the host');
  }
  return { url: `${parsed.protocol}//${parsed.host}`, baseDn };
}

function parseFilter(value: string | undefined): string {
  const template = value ?? DEFAULT_FILTER;
  if (!template.includes('{0}')) throw new ConfigError('SERVICE_JNDI_FILTER', 'must contain the placeholder {0} for the login ID');
  const filter = template.startsWith('(') ? template : `(${template})`;
  // RFC 4515 values escape their parentheses, so every one in the template is syntax and must pair up.
  let depth = 0;
  for (const c of filter) {
    depth += c === '(' ? 1 : c === ')' ? -1 : 0;
    if (depth < 0) break;
  }
  if (depth !== 0) throw new ConfigError('SERVICE_JNDI_FILTER', 'is not an LDAP filter (RFC 4515): its parentheses do not pair up');
  try {
    FilterParser.parseString(filter.split('{0}').join('x'));
  } catch (err) {
    throw new ConfigError('SERVICE_JNDI_FILTER', `is not an LDAP filter (RFC 4515): ${(err as Error).message}`);
  }
  return filter;
}

function attributeNames(env: Env): AttributeNames {
  const names: AttributeNames = {};
  for (const [part, setting] of ATTRIBUTE_SETTINGS) {
    const name = text(env, setting);
    if (name === undefined) continue;
    if (!ATTRIBUTE_NAME.test(name)) throw new ConfigError(setting, 'must be an LDAP attribute name such as memberOf or departmentNumber');
    names[part] = name;
  }
  return names;
}

export function parseDirectorySettings(env: Env): DirectorySettings {
  const factory = text(env, 'SERVICE_JNDI_FACTORY');
  if (factory !== undefined && factory !== STANDARD_FACTORY) {
    throw new ConfigError('SERVICE_JNDI_FACTORY', `only the standard LDAP context factory ${STANDARD_FACTORY} is supported (or leave it empty)`);
  }
  const { url, baseDn } = parseUrl(required(env, 'SERVICE_JNDI_URL', 'the directory to sign in against'));
  const searchUser = required(env, 'SERVICE_JNDI_USER', 'the search user');
  // Not trimmed: a password may well end in a blank. An empty one would be an unauthenticated bind.
  const searchPassword = env.SERVICE_JNDI_PASSWORD ?? '';
  if (!searchPassword) {
    throw new ConfigError('SERVICE_JNDI_PASSWORD', 'is required with SERVICE_JNDI_AUTHENTICATION=true: unauthenticated binds are not supported');
  }
  const context = text(env, 'SERVICE_JNDI_CONTEXT');
  const searchBase = [context, baseDn].filter(Boolean).join(',');
  return {
    url,
    searchUser,
    searchPassword,
    searchBase,
    filter: parseFilter(text(env, 'SERVICE_JNDI_FILTER')),
    attributes: attributeNames(env),
    connectTimeoutMs: milliseconds(env, 'SERVICE_JNDI_CONNECT_TIMEOUT'),
    timeoutMs: milliseconds(env, 'SERVICE_JNDI_READ_TIMEOUT'),
  };
}
