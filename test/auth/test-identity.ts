/**
 * A test-only external method: its driver vouches for whatever identity the
 * request's `x-test-identity` header holds (Base64 of the JSON of an
 * ExternalIdentity, so that names may hold any character),
 * as a verifying method (directory, identity provider, proxy) would after
 * checking the caller. It lets the core's handling of external identities
 * (login tenant, access rules, subject pinning) be tested apart from the
 * real drivers. Phase `credentials`, like the directory and pre-authentication.
 */
import type { ExternalIdentity } from '../../runtime/auth/types.ts';
import type { PluginManifest } from '../../runtime/plugins.ts';

export const IDENTITY_HEADER = 'x-test-identity';

export const testIdentityPlugin: PluginManifest = {
  name: 'test-identity', host: '^1',
  register(host) {
    host.addAuthDriver({
      name: 'testIdentity',
      async authenticate({ ctx }) {
        const header = ctx.get(IDENTITY_HEADER);
        if (!header) return null;
        return { kind: 'external', identity: JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as ExternalIdentity };
      },
    }, 'credentials');
  },
};

/** Request options that sign in as the identity by the test method alone. */
export function as(identity: ExternalIdentity, headers: Record<string, string> = {}) {
  return { auth: null, headers: { ...headers, [IDENTITY_HEADER]: Buffer.from(JSON.stringify(identity), 'utf8').toString('base64') } };
}
