/** Every plugin the service ships; configuration decides which are on. */
import type { PluginManifest } from '../runtime/plugins.ts';
import { manifest as authBasic } from './auth-basic/index.ts';

export const PLUGINS: PluginManifest[] = [authBasic];
