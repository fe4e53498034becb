/**
 * The settings the user interface reads. The OpenID Connect ones are
 * auth-oidc's too (one setting, one meaning); the code flow adds the
 * client's secret, which only a confidential client has.
 */
export interface WebSettings {
  SERVICE_SESSION_IDLE_TIMEOUT: number;
  SERVICE_SESSION_MAX_AGE: number;
  SERVICE_LOGOUT_URL?: string;
  SERVICE_OIDC_PROVIDER_URL?: string;
  SERVICE_OIDC_CLIENT_ID?: string;
  SERVICE_OIDC_CLIENT_SECRET?: string;
}

const MILLISECONDS = { type: 'integer', minimum: 1000, maximum: 999_999_999_999 };

export const configSchema = {
  type: 'object',
  properties: {
    SERVICE_SESSION_IDLE_TIMEOUT: {
      ...MILLISECONDS, default: 1_800_000,
      description: 'a whole number of milliseconds from 1000 to 999999999999: a session of the user interface unused that long ends',
    },
    SERVICE_SESSION_MAX_AGE: {
      ...MILLISECONDS, default: 43_200_000,
      description: 'a whole number of milliseconds from 1000 to 999999999999: a session of the user interface ends that long after sign-in',
    },
    // The same as the session plugin's.
    SERVICE_LOGOUT_URL: {
      type: 'string', pattern: '^(?:https?://[^\\s/?#]+|/(?!/))[^\\s]*$',
      description: 'an http:// or https:// URL, or a path on this host starting with a single /, without spaces',
    },
    // auth-oidc's, read here only while it is on (it checks them then); left alone otherwise, as auth-oidc leaves them.
    SERVICE_OIDC_PROVIDER_URL: { type: 'string' },
    SERVICE_OIDC_CLIENT_ID: { type: 'string' },
    // The code flow's own: the secret of SERVICE_OIDC_CLIENT_ID at the provider, for a confidential client.
    SERVICE_OIDC_CLIENT_SECRET: { type: 'string' },
  },
};
