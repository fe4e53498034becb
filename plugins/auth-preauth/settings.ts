/**
 * The settings of single sign-on by pre-authentication (specification,
 * method 2), with their defaults and the deprecated alias
 * SERVICE_REMOTE_USER. The JSON schema is checked before the plugin
 * registers; a failure stops the start naming the setting.
 */

/** RFC 9110 token: the characters a header field name may have. */
const HEADER_NAME = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
/** Visible ASCII with inner spaces: what a client can send in a header and get back unchanged (values are trimmed). */
const HEADER_TOKEN = '^[!-~](?:[ !-~]*[!-~])?$';
const CLAIM_NAME = '^\\S+$';

const HEADER_SETTINGS = [
  'SERVICE_REMOTE_USER_ID', 'SERVICE_REMOTE_USER', 'SERVICE_REMOTE_USER_GROUP_ID', 'SERVICE_REMOTE_USER_TENANT_ID',
  'SERVICE_REMOTE_USER_FAMILY_NAME', 'SERVICE_REMOTE_USER_GIVEN_NAME', 'SERVICE_REMOTE_USER_TENANT_NAME',
  'SERVICE_REMOTE_USER_OIDC_JWT', 'SERVICE_API_KEY',
];
const CLAIM_SETTINGS = [
  'SERVICE_OIDC_JWT_SUB_ID', 'SERVICE_OIDC_JWT_GROUP_ID', 'SERVICE_OIDC_JWT_TENANT_ID', 'SERVICE_OIDC_JWT_CLIENT_ID',
  'SERVICE_OIDC_JWT_USER_NAME', 'SERVICE_OIDC_JWT_FAMILY_NAME', 'SERVICE_OIDC_JWT_GIVEN_NAME', 'SERVICE_OIDC_JWT_TENANT_NAME',
];

export const configSchema = {
  type: 'object',
  properties: {
    ...Object.fromEntries(HEADER_SETTINGS.map((name) => [name, { type: 'string', pattern: HEADER_NAME, description: 'an HTTP header name (letters, digits, hyphens and the other characters of an RFC 9110 token; no spaces)' }])),
    ...Object.fromEntries(CLAIM_SETTINGS.map((name) => [name, { type: 'string', pattern: CLAIM_NAME, description: 'a claim name without spaces' }])),
    SERVICE_API_KEY_TOKEN: { type: 'string', pattern: HEADER_TOKEN, description: 'visible ASCII characters, with spaces only between them' },
    SERVICE_OIDC_CLIENT_ID: { type: 'string', pattern: CLAIM_NAME, description: 'a client ID without spaces' },
  },
  // Without the login-ID header the method cannot sign anyone in; the first alternative names the current setting.
  anyOf: [{ required: ['SERVICE_REMOTE_USER_ID'] }, { required: ['SERVICE_REMOTE_USER'] }],
  // A token without its header, or a header without a token, would be a gate that is half set up.
  // (draft-07 `dependencies`: the loader's ajv ignores the newer `dependentRequired`.)
  dependencies: {
    SERVICE_API_KEY_TOKEN: ['SERVICE_API_KEY'],
    SERVICE_API_KEY: ['SERVICE_API_KEY_TOKEN'],
  },
};

/** Header names, lower case as Node delivers them. */
export interface PreAuthHeaders {
  loginId: string;
  groups?: string;
  tenantId?: string;
  familyName?: string;
  givenName?: string;
  tenantName?: string;
  jwt?: string;
}

export interface PreAuthClaims {
  subjectId?: string;
  groups?: string;
  tenantId?: string;
  clientId: string;
  userName?: string;
  familyName?: string;
  givenName?: string;
  tenantName?: string;
}

export interface PreAuthSettings {
  headers: PreAuthHeaders;
  claims: PreAuthClaims;
  /** SERVICE_OIDC_CLIENT_ID: when set, an injected JWT must name it in its client-ID claim. */
  clientId?: string;
  apiKey?: { header: string; token: string };
  /** The login-ID header came from the deprecated SERVICE_REMOTE_USER. */
  usesDeprecatedAlias: boolean;
}

/** Reads the (schema-checked) settings; an empty value counts as unset. */
export function readSettings(env: Record<string, string | undefined>): PreAuthSettings {
  const value = (name: string) => env[name]?.trim() || undefined;
  const header = (name: string) => value(name)?.toLowerCase();
  const current = header('SERVICE_REMOTE_USER_ID');
  const alias = header('SERVICE_REMOTE_USER');
  const loginId = current ?? alias;
  if (!loginId) throw new Error('SERVICE_REMOTE_USER_ID is not set (the configuration schema should have refused this)');
  const apiKeyHeader = header('SERVICE_API_KEY');
  const apiKeyToken = env.SERVICE_API_KEY_TOKEN || undefined;
  return {
    headers: {
      loginId,
      groups: header('SERVICE_REMOTE_USER_GROUP_ID'),
      tenantId: header('SERVICE_REMOTE_USER_TENANT_ID'),
      familyName: header('SERVICE_REMOTE_USER_FAMILY_NAME'),
      givenName: header('SERVICE_REMOTE_USER_GIVEN_NAME'),
      tenantName: header('SERVICE_REMOTE_USER_TENANT_NAME'),
      jwt: header('SERVICE_REMOTE_USER_OIDC_JWT'),
    },
    claims: {
      subjectId: value('SERVICE_OIDC_JWT_SUB_ID'),
      groups: value('SERVICE_OIDC_JWT_GROUP_ID'),
      tenantId: value('SERVICE_OIDC_JWT_TENANT_ID'),
      clientId: value('SERVICE_OIDC_JWT_CLIENT_ID') ?? 'aud',
      userName: value('SERVICE_OIDC_JWT_USER_NAME'),
      familyName: value('SERVICE_OIDC_JWT_FAMILY_NAME'),
      givenName: value('SERVICE_OIDC_JWT_GIVEN_NAME'),
      tenantName: value('SERVICE_OIDC_JWT_TENANT_NAME'),
    },
    clientId: value('SERVICE_OIDC_CLIENT_ID'),
    apiKey: apiKeyHeader && apiKeyToken ? { header: apiKeyHeader, token: apiKeyToken } : undefined,
    usesDeprecatedAlias: !current && !!alias,
  };
}
