/**
 * `Authorization: Basic` as every method that reads login ID and password
 * parses it (the service's own passwords, the directory, a third party's):
 * one parser, so that they all refuse the same malformed headers.
 */

/** Parses `Basic base64(loginId:password)`; null when the header is of another scheme. */
export function parseBasic(header: string): { loginId: string; password: string } | null | 'malformed' {
  if (!/^Basic /i.test(header)) return null;
  const match = /^Basic +([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) return 'malformed';
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return 'malformed';
  const loginId = decoded.slice(0, colon);
  // No login ID holds control characters, and the database refuses NUL in text.
  if (/[\u0000-\u001f\u007f]/.test(loginId)) return 'malformed';
  return { loginId, password: decoded.slice(colon + 1) };
}
