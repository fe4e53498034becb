/**
 * The settings of directory sign-in (specification, method 3), read and
 * checked once at start: a directory that cannot be reached at all, or a
 * filter that cannot find anyone, must stop the start naming the setting,
 * not turn every sign-in into a puzzle. The schema (configSchema) checks,
 * converts and defaults what it can say; parseDirectorySettings takes its
 * typed result and checks the rest: the settings the method cannot do
 * without, the URL and the filter.
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

const ATTRIBUTE_SETTINGS = [
  ['groups', 'SERVICE_JNDI_GROUP_ID'],
  ['tenantId', 'SERVICE_JNDI_TENANT_ID'],
  ['commonName', 'SERVICE_JNDI_COMMON_NAME'],
  ['familyName', 'SERVICE_JNDI_FAMILY_NAME'],
  ['givenName', 'SERVICE_JNDI_GIVEN_NAME'],
  ['tenantName', 'SERVICE_JNDI_TENANT_NAME'],
] as const satisfies readonly [keyof AttributeNames, keyof LdapPluginSettings][];

/** The settings as the schema makes them: timeouts are numbers, every one with a default has it. */
export interface LdapPluginSettings {
  SERVICE_JNDI_FACTORY?: string;
  SERVICE_JNDI_URL?: string;
  SERVICE_JNDI_USER?: string;
  SERVICE_JNDI_PASSWORD?: string;
  SERVICE_JNDI_CONTEXT?: string;
  SERVICE_JNDI_FILTER: string;
  SERVICE_JNDI_GROUP_ID?: string;
  SERVICE_JNDI_TENANT_ID?: string;
  SERVICE_JNDI_COMMON_NAME?: string;
  SERVICE_JNDI_FAMILY_NAME?: string;
  SERVICE_JNDI_TENANT_NAME?: string;
  SERVICE_JNDI_GIVEN_NAME?: string;
  SERVICE_JNDI_CONNECT_TIMEOUT: number;
  SERVICE_JNDI_READ_TIMEOUT: number;
  SERVICE_AUTH_CACHE_TTL: number;
}

// An attribute description (RFC 4512): a name or an OID, without options.
const attributeName = {
  type: 'string', pattern: '^(?:[A-Za-z][A-Za-z0-9-]*|[0-9]+(?:\\.[0-9]+)+)$',
  description: 'an LDAP attribute name such as memberOf or departmentNumber',
};
const timeout = {
  type: 'integer', minimum: 1, maximum: 600_000, default: DEFAULT_TIMEOUT_MS,
  description: 'a whole number of milliseconds from 1 to 600000',
};

/**
 * What the schema can say. URL, search user and password are not in
 * `required`: blanks alone count as unset there, and the refusal says why
 * the method needs them; parseDirectorySettings checks those, and parses
 * the URL and the filter.
 */
export const configSchema = {
  type: 'object',
  properties: {
    SERVICE_JNDI_FACTORY: {
      type: 'string', enum: [STANDARD_FACTORY],
      description: `the standard LDAP context factory ${STANDARD_FACTORY}, the only one supported (or left empty)`,
    },
    SERVICE_JNDI_URL: { type: 'string' },
    SERVICE_JNDI_USER: { type: 'string' },
    SERVICE_JNDI_PASSWORD: { type: 'string' },
    SERVICE_JNDI_CONTEXT: { type: 'string' },
    SERVICE_JNDI_FILTER: {
      type: 'string', default: DEFAULT_FILTER,
      description: 'an LDAP filter (RFC 4515) with the placeholder {0} for the login ID, e.g. (&(objectClass=person)(uid={0}))',
    },
    ...Object.fromEntries(ATTRIBUTE_SETTINGS.map(([, setting]) => [setting, attributeName])),
    SERVICE_JNDI_CONNECT_TIMEOUT: timeout,
    SERVICE_JNDI_READ_TIMEOUT: timeout,
    // The same as auth-basic's and auth-oidc's: one setting, one meaning.
    SERVICE_AUTH_CACHE_TTL: {
      type: 'integer', minimum: 0, maximum: 999_999_999, default: 10_000,
      description: 'a whole number of milliseconds from 0 to 999999999',
    },
  },
};

/** A text setting with its surrounding blanks dropped; blanks alone count as unset, as an empty value does. */
function text(value: string | undefined): string | undefined {
  return value?.trim() || undefined;
}

function required(value: string | undefined, name: string, why: string): string {
  const v = text(value);
  if (v === undefined) throw new ConfigError(name, `is required with SERVICE_JNDI_AUTHENTICATION=true (${why})`);
  return v;
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

function parseFilter(template: string): string {
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

/** The structured settings the directory uses, from the settings as the schema made them (checkPluginConfig). */
export function parseDirectorySettings(settings: LdapPluginSettings): DirectorySettings {
  const { url, baseDn } = parseUrl(required(settings.SERVICE_JNDI_URL, 'SERVICE_JNDI_URL', 'the directory to sign in against'));
  const searchUser = required(settings.SERVICE_JNDI_USER, 'SERVICE_JNDI_USER', 'the search user');
  // Not trimmed: a password may well end in a blank. An empty one would be an unauthenticated bind.
  const searchPassword = settings.SERVICE_JNDI_PASSWORD;
  if (!searchPassword) {
    throw new ConfigError('SERVICE_JNDI_PASSWORD', 'is required with SERVICE_JNDI_AUTHENTICATION=true: unauthenticated binds are not supported');
  }
  const searchBase = [text(settings.SERVICE_JNDI_CONTEXT), baseDn].filter(Boolean).join(',');
  const attributes: AttributeNames = {};
  for (const [part, setting] of ATTRIBUTE_SETTINGS) {
    const name = settings[setting];
    if (name !== undefined) attributes[part] = name;
  }
  return {
    url,
    searchUser,
    searchPassword,
    searchBase,
    // A filter of blanks is no filter: the default, as it always was.
    filter: parseFilter(text(settings.SERVICE_JNDI_FILTER) ?? DEFAULT_FILTER),
    attributes,
    connectTimeoutMs: settings.SERVICE_JNDI_CONNECT_TIMEOUT,
    timeoutMs: settings.SERVICE_JNDI_READ_TIMEOUT,
  };
}
