/**
 * The settings of single sign-on by pre-authentication (specification,
 * method 2), with their defaults and the deprecated alias
 * SERVICE_REMOTE_USER. The JSON schema checks, converts and defaults them
 * before the plugin registers (a failure stops the start naming the
 * setting); readSettings turns the typed settings into what the driver uses.
 */

/** RFC 9110 token: the characters a header field name may have. */
const HEADER_NAME = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
/** Visible ASCII with inner spaces: what a client can send in a header and get back unchanged (values are trimmed). */
const HEADER_TOKEN = '^[!-~](?:[ !-~]*[!-~])?$';
const CLAIM_NAME = '^\\S+$';

const headerName = { type: 'string', pattern: HEADER_NAME, description: 'an HTTP header name (letters, digits, hyphens and the other characters of an RFC 9110 token; no spaces)' };
const claimName = { type: 'string', pattern: CLAIM_NAME, description: 'a claim name without spaces' };

/**
 * The settings as the schema makes them: one of the login-ID headers is
 * there, the API key's header and token come together, the client-ID claim
 * has its default.
 */
export interface PreAuthPluginSettings {
  SERVICE_REMOTE_USER_ID?: string;
  /** Deprecated alias of SERVICE_REMOTE_USER_ID. */
  SERVICE_REMOTE_USER?: string;
  SERVICE_REMOTE_USER_GROUP_ID?: string;
  SERVICE_REMOTE_USER_TENANT_ID?: string;
  SERVICE_REMOTE_USER_FAMILY_NAME?: string;
  SERVICE_REMOTE_USER_GIVEN_NAME?: string;
  SERVICE_REMOTE_USER_TENANT_NAME?: string;
  SERVICE_REMOTE_USER_OIDC_JWT?: string;
  SERVICE_API_KEY?: string;
  SERVICE_API_KEY_TOKEN?: string;
  SERVICE_OIDC_JWT_SUB_ID?: string;
  SERVICE_OIDC_JWT_GROUP_ID?: string;
  SERVICE_OIDC_JWT_TENANT_ID?: string;
  SERVICE_OIDC_JWT_CLIENT_ID: string;
  SERVICE_OIDC_JWT_USER_NAME?: string;
  SERVICE_OIDC_JWT_FAMILY_NAME?: string;
  SERVICE_OIDC_JWT_GIVEN_NAME?: string;
  SERVICE_OIDC_JWT_TENANT_NAME?: string;
  SERVICE_OIDC_CLIENT_ID?: string;
}

export const configSchema = {
  type: 'object',
  properties: {
    SERVICE_REMOTE_USER_ID: headerName,
    SERVICE_REMOTE_USER: headerName,
    SERVICE_REMOTE_USER_GROUP_ID: headerName,
    SERVICE_REMOTE_USER_TENANT_ID: headerName,
    SERVICE_REMOTE_USER_FAMILY_NAME: headerName,
    SERVICE_REMOTE_USER_GIVEN_NAME: headerName,
    SERVICE_REMOTE_USER_TENANT_NAME: headerName,
    SERVICE_REMOTE_USER_OIDC_JWT: headerName,
    SERVICE_API_KEY: headerName,
    SERVICE_OIDC_JWT_SUB_ID: claimName,
    SERVICE_OIDC_JWT_GROUP_ID: claimName,
    SERVICE_OIDC_JWT_TENANT_ID: claimName,
    SERVICE_OIDC_JWT_CLIENT_ID: { ...claimName, default: 'aud' },
    SERVICE_OIDC_JWT_USER_NAME: claimName,
    SERVICE_OIDC_JWT_FAMILY_NAME: claimName,
    SERVICE_OIDC_JWT_GIVEN_NAME: claimName,
    SERVICE_OIDC_JWT_TENANT_NAME: claimName,
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

/**
 * The structured settings the driver uses, from the settings as the schema
 * made them (checkPluginConfig): header names in lower case, the login-ID
 * header from the deprecated alias when the current setting is not there.
 */
export function readSettings(settings: PreAuthPluginSettings): PreAuthSettings {
  const header = (name: string | undefined) => name?.toLowerCase();
  const current = header(settings.SERVICE_REMOTE_USER_ID);
  const alias = header(settings.SERVICE_REMOTE_USER);
  const loginId = current ?? alias;
  if (!loginId) throw new Error('SERVICE_REMOTE_USER_ID is not set (the configuration schema should have refused this)');
  const apiKeyHeader = header(settings.SERVICE_API_KEY);
  const apiKeyToken = settings.SERVICE_API_KEY_TOKEN;
  return {
    headers: {
      loginId,
      groups: header(settings.SERVICE_REMOTE_USER_GROUP_ID),
      tenantId: header(settings.SERVICE_REMOTE_USER_TENANT_ID),
      familyName: header(settings.SERVICE_REMOTE_USER_FAMILY_NAME),
      givenName: header(settings.SERVICE_REMOTE_USER_GIVEN_NAME),
      tenantName: header(settings.SERVICE_REMOTE_USER_TENANT_NAME),
      jwt: header(settings.SERVICE_REMOTE_USER_OIDC_JWT),
    },
    claims: {
      subjectId: settings.SERVICE_OIDC_JWT_SUB_ID,
      groups: settings.SERVICE_OIDC_JWT_GROUP_ID,
      tenantId: settings.SERVICE_OIDC_JWT_TENANT_ID,
      clientId: settings.SERVICE_OIDC_JWT_CLIENT_ID,
      userName: settings.SERVICE_OIDC_JWT_USER_NAME,
      familyName: settings.SERVICE_OIDC_JWT_FAMILY_NAME,
      givenName: settings.SERVICE_OIDC_JWT_GIVEN_NAME,
      tenantName: settings.SERVICE_OIDC_JWT_TENANT_NAME,
    },
    clientId: settings.SERVICE_OIDC_CLIENT_ID,
    // The schema sets both or neither (its dependencies).
    apiKey: apiKeyHeader && apiKeyToken ? { header: apiKeyHeader, token: apiKeyToken } : undefined,
    usesDeprecatedAlias: !current && !!alias,
  };
}
