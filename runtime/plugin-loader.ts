/**
 * From the offered manifests (the built-ins, then those SERVICE_PLUGINS
 * names) to the plugins that run, with their typed settings; all of it
 * before any storage is opened, so a wrong configuration stops the start at
 * once with a message naming the plugin or the setting:
 * 1. every manifest is one, written for this host API (HOST_API_VERSION);
 * 2. the sign-in methods they declare decide which methods are on and
 *    refuse forbidden combinations (runtime/auth/methods.ts);
 * 3. the configuration decides which plugins are on, and only those are
 *    ordered by their dependencies, so a dependency switched off is a
 *    missing one;
 * 4. a misspelt setting under a plugin's prefix is refused;
 * 5. each plugin's settings are checked, converted and defaulted by ajv,
 *    then by the plugin's own `checkSettings`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, CORE_SETTINGS } from './config.ts';
import { HOST_API_VERSION } from './host-version.ts';
import { registerMessages, type Language } from './messages.ts';
import { methodsOn } from './auth/methods.ts';
import { checkManifest, checkPluginConfig, checkUnknownSettings, orderPlugins, PluginError, type PluginManifest, type PluginSettings } from './plugins.ts';


export interface LoadedPlugin {
  manifest: PluginManifest;
  settings: PluginSettings;
}

export interface LoadedPlugins {
  /** In the order they register: each after its dependencies. */
  plugins: LoadedPlugin[];
  /** The sign-in methods that are on, by name. */
  methodsOn: ReadonlySet<string>;
}

export function loadPlugins(offered: PluginManifest[], env: Record<string, string | undefined>, hostVersion = HOST_API_VERSION): LoadedPlugins {
  for (const manifest of offered) checkManifest(manifest, hostVersion);
  const on = methodsOn(offered.flatMap((m) => (m.method ? [m.method] : [])), env);
  const enabled = offered.filter((m) => isOn(m, on, env));
  const ordered = orderPlugins(enabled);
  checkUnknownSettings(ordered, offered, CORE_SETTINGS, env);
  const plugins = ordered.map((manifest) => {
    const settings = checkPluginConfig(manifest, env);
    manifest.checkSettings?.(settings);
    return { manifest, settings };
  });
  registerPluginMessages(plugins.map((p) => p.manifest));
  return { plugins, methodsOn: on };
}

/** Adds the texts the manifests declare to the service's messages (a key may be declared once). */
export function registerPluginMessages(manifests: PluginManifest[]): void {
  for (const manifest of manifests) {
    for (const [language, texts] of Object.entries(manifest.messages ?? {})) registerMessages(language as Language, texts);
  }
}

/** A plugin with a switched sign-in method is on exactly when its method is; `enabled` may switch any plugin off. */
function isOn(manifest: PluginManifest, methods: ReadonlySet<string>, env: Record<string, string | undefined>): boolean {
  const method = manifest.method;
  if (method && typeof method.on === 'object' && !methods.has(method.name)) return false;
  return !manifest.enabled || manifest.enabled(env);
}

/**
 * The manifests SERVICE_PLUGINS names: `;`-separated npm package names
 * (resolved from the service's own node_modules) or paths (starting with
 * `.` or `/`, relative to the working directory; a folder is read as a
 * package). Each must export `manifest` (or a default export) that is a
 * manifest; the host version is checked with the others.
 */
export async function importPlugins(setting: string | undefined, cwd = process.cwd()): Promise<PluginManifest[]> {
  const entries = (setting ?? '').split(';').map((s) => s.trim()).filter(Boolean);
  const manifests: PluginManifest[] = [];
  for (const entry of entries) {
    let module: Record<string, unknown>;
    try {
      module = await import(isPath(entry) ? pathToFileURL(entryFile(resolve(cwd, entry))).href : entry);
    } catch (err) {
      throw new ConfigError('SERVICE_PLUGINS', `cannot load ${entry}: ${err instanceof Error ? err.message : String(err)}`);
    }
    const manifest = (module.manifest ?? module.default) as PluginManifest | undefined;
    if (!manifest || typeof manifest !== 'object' || typeof manifest.name !== 'string' || typeof manifest.register !== 'function') {
      throw new ConfigError('SERVICE_PLUGINS', `${entry} exports no plugin manifest (an export named manifest, or the default export, with a name and a register function)`);
    }
    manifests.push(manifest);
  }
  return manifests;
}

function isPath(entry: string): boolean {
  return entry.startsWith('.') || isAbsolute(entry);
}

/** A file as it is; a folder by its package.json (`exports` ".", then `main`), else its index. */
function entryFile(path: string): string {
  if (!existsSync(path) || !statSync(path).isDirectory()) return path;
  const packageFile = join(path, 'package.json');
  if (existsSync(packageFile)) {
    const pkg = JSON.parse(readFileSync(packageFile, 'utf8')) as { exports?: unknown; main?: string };
    const main = typeof pkg.exports === 'string' ? pkg.exports : (pkg.exports as Record<string, unknown> | undefined)?.['.'];
    if (typeof main === 'string') return join(path, main);
    if (pkg.main) return join(path, pkg.main);
  }
  for (const index of ['index.js', 'index.mjs', 'index.ts']) if (existsSync(join(path, index))) return join(path, index);
  throw new PluginError('PLUGIN_INVALID', `${path} is a folder without package.json entry or index file`);
}
