/**
 * The search filter for one sign-in: the configured template with every `{0}`
 * replaced by the login ID, escaped as RFC 4515 asks (`*` `(` `)` `\` NUL),
 * so that a login ID such as `*` or `admin)(|(uid=*` is looked up as the
 * literal text it is and can never widen the search.
 */
import { Filter } from 'ldapts';

/** The login ID as an assertion value; other characters, non-ASCII included, go as UTF-8. */
export function escapeFilterValue(value: string): string {
  return Filter.escape(value);
}

export function searchFilter(template: string, loginId: string): string {
  return template.split('{0}').join(escapeFilterValue(loginId));
}

/**
 * The attribute the filter compares the login ID with for equality
 * (`uid={0}`, `(&(objectClass=person)(mail={0}))`), when there is exactly
 * one: its value in the found entry is the login ID as the directory knows
 * it. None for other filters (`cn=*{0}*`, two attributes).
 */
export function loginAttribute(template: string): string | undefined {
  const names = new Set([...template.matchAll(/(?:^|\()\s*([A-Za-z][A-Za-z0-9-]*|[0-9]+(?:\.[0-9]+)+)\s*=\{0\}\s*(?:\)|$)/g)].map((m) => m[1].toLowerCase()));
  return names.size === 1 ? [...names][0] : undefined;
}
