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
