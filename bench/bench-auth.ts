/**
 * A bench-only authentication driver: every request is the fixed principal
 * below, unchecked, so that a run without it shows what authentication costs.
 * It stands aside for requests that carry an Authorization header, so that it
 * can share one service with auth-basic where a second instance cannot share
 * the storage (PGlite in memory).
 */
import type { PluginManifest } from '../runtime/plugins.ts';
import type { Principal } from '../runtime/auth/types.ts';

export function benchAuthPlugin(defaultTenant: () => string): PluginManifest {
  return {
    name: 'bench-auth', host: '^1',
    register(host) {
      host.addAuthDriver({
        name: 'bench',
        async authenticate({ ctx }) {
          if (ctx.headers.authorization) return null;
          const principal: Principal = { loginId: 'bench', tenant: defaultTenant(), accessLevel: 'ADMINISTRATOR', systemAdmin: true, method: 'bench' };
          return { kind: 'principal', principal };
        },
      }, 'gate');
    },
  };
}
