/**
 * The built-in plugins' parts of the OpenAPI document: the `openapi`
 * fragment each manifest declares (runtime/openapi-fragment.ts, kept in
 * `plugins/<name>/openapi.ts` next to the code that answers the calls).
 * Sorted by plugin name, so that the output does not depend on the list's
 * order. Plugins from outside the repository declare theirs the same way;
 * the service adds them to the document it serves.
 */
import { PLUGINS } from '../../../plugins/index.ts';
import type { OpenApiFragment } from '../../../runtime/openapi-fragment.ts';

export const pluginFragments: { plugin: string; fragment: OpenApiFragment }[] = PLUGINS
  .filter((m) => m.openapi)
  .map((m) => ({ plugin: m.name, fragment: m.openapi! }))
  .sort((a, b) => (a.plugin < b.plugin ? -1 : a.plugin > b.plugin ? 1 : 0));
