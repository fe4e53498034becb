/**
 * Which sign-in methods the configuration switches on, and which
 * combinations it may not, derived from what each plugin declares of its
 * method (runtime/plugins.ts SignInMethod): a third party's method is
 * treated exactly as a built-in one. The service never starts with
 * authentication half-configured or ambiguous.
 *
 * - A method with a switch is on when its setting is true.
 * - A method that excludes another stops the start when both are on,
 *   naming both switches and saying why (pre-authentication excludes the
 *   directory and OpenID Connect).
 * - Login ID and password against the service's own passwords (`otherwise`)
 *   is on only when no switched method is (general rule 6).
 * - Access keys (`always`) are accepted beside every method.
 */
import { booleanSetting, ConfigError } from '../config.ts';
import type { SignInMethod } from '../plugins.ts';
import { PluginError } from '../plugins.ts';

/** The names of the methods that are on. */
export function methodsOn(methods: SignInMethod[], env: Record<string, string | undefined>): ReadonlySet<string> {
  const byName = new Map<string, SignInMethod>();
  for (const method of methods) {
    if (byName.has(method.name)) throw new PluginError('PLUGIN_DUPLICATE', `sign-in method ${method.name} is declared twice`);
    byName.set(method.name, method);
  }
  const switched = methods.filter((m) => typeof m.on === 'object' && booleanSetting(env, m.on.setting, false));
  for (const method of switched) {
    for (const exclusion of method.excludes ?? []) {
      const other = switched.find((m) => m.name === exclusion.method);
      if (other) throw new ConfigError(switchOf(method), `cannot be combined with ${switchOf(other)}: ${exclusion.reason}`);
    }
  }
  const on = new Set(switched.map((m) => m.name));
  for (const method of methods) {
    if (method.on === 'always' || (method.on === 'otherwise' && switched.length === 0)) on.add(method.name);
  }
  return on;
}

function switchOf(method: SignInMethod): string {
  return typeof method.on === 'object' ? method.on.setting : method.name;
}
