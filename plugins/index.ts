/** Every plugin the service ships; configuration decides which are on. */
import type { PluginManifest } from '../runtime/host.ts';
import { manifest as authBasic } from './auth-basic/index.ts';
import { manifest as authPreauth } from './auth-preauth/index.ts';
import { manifest as session } from './session/index.ts';
import { manifest as authLdap } from './auth-ldap/index.ts';
import { manifest as access } from './access/index.ts';
import { manifest as authOidc } from './auth-oidc/index.ts';
import { manifest as profiles } from './profiles/index.ts';
import { manifest as query } from './query/index.ts';
import { manifest as web } from './web/index.ts';
import { manifest as transfer } from './transfer/index.ts';

export const PLUGINS: PluginManifest[] = [access, authBasic, authPreauth, session, authLdap, authOidc, profiles, query, transfer, web];
