/**
 * Which sign-in methods the configuration switches on, and which
 * combinations it may not: the service never starts with authentication
 * half-configured or ambiguous.
 *
 * - Pre-authentication trusts the proxy's headers and, per the specification
 *   (release 4.1), turns login ID and password off for programming
 *   interfaces; it excludes the directory (which reads login ID and password)
 *   and OpenID Connect bearer tokens (the proxy is the authentication module).
 * - Directory sign-in and OpenID Connect may run together: one reads Basic
 *   credentials, the other Bearer tokens.
 * - Login ID and password against the service's own passwords is on only
 *   when no other method is (general rule 6).
 * - Access keys are always accepted on programming interfaces.
 */
import { booleanSetting, ConfigError } from '../config.ts';

export interface Methods {
  basic: boolean;
  preAuthentication: boolean;
  directory: boolean;
  oidc: boolean;
}

export function enabledMethods(env: Record<string, string | undefined>): Methods {
  const preAuthentication = booleanSetting(env, 'SERVICE_PRE_AUTHENTICATION', false);
  const directory = booleanSetting(env, 'SERVICE_JNDI_AUTHENTICATION', false);
  const oidc = booleanSetting(env, 'SERVICE_OIDC_AUTHENTICATION', false);
  if (preAuthentication && directory) {
    throw new ConfigError('SERVICE_PRE_AUTHENTICATION', 'cannot be combined with SERVICE_JNDI_AUTHENTICATION: with pre-authentication the proxy signs users in, and login ID and password are not accepted');
  }
  if (preAuthentication && oidc) {
    throw new ConfigError('SERVICE_PRE_AUTHENTICATION', 'cannot be combined with SERVICE_OIDC_AUTHENTICATION: with pre-authentication the proxy signs users in; pass the identity provider\'s token in SERVICE_REMOTE_USER_OIDC_JWT instead');
  }
  return { basic: !preAuthentication && !directory && !oidc, preAuthentication, directory, oidc };
}
