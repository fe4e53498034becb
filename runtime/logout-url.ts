/**
 * The Logout entry's address (SERVICE_LOGOUT_URL). Its placeholder
 * `${POST_LOGOUT_REDIRECT_URL}` becomes the URL of the current database in
 * the user interface, so the sign-in module can send the user back there.
 * Inside a query or fragment the URL is percent-encoded as one parameter
 * value (`?redirect_uri=https%3A%2F%2F…`); elsewhere (the whole address or
 * a path) it is inserted as it is.
 */
export const PLACEHOLDER = '${POST_LOGOUT_REDIRECT_URL}';

export function logoutUrl(template: string, redirectUrl: string): string {
  let out = '';
  let rest = template;
  for (let at = rest.indexOf(PLACEHOLDER); at >= 0; at = rest.indexOf(PLACEHOLDER)) {
    out += rest.slice(0, at);
    out += /[?#]/.test(out) ? encodeURIComponent(redirectUrl) : redirectUrl;
    rest = rest.slice(at + PLACEHOLDER.length);
  }
  return out + rest;
}

/** The user interface's address of a database: `<base>/web/<db>`. */
export function databaseUiUrl(base: string, db: string): string {
  return `${base}/web/${encodeURIComponent(db)}`;
}
