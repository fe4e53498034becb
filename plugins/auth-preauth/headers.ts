/**
 * Reads the values a reverse proxy put into request headers.
 *
 * HTTP header values are bytes; Node hands them over as Latin-1 strings, one
 * character per byte. Proxies pass what their authentication module found,
 * and those modules (directory, SAML, OpenID Connect) speak UTF-8, so a
 * value whose bytes form valid UTF-8 is read as UTF-8 ("jÃ¼rgen" on the wire
 * is "jürgen"). Bytes that are not valid UTF-8 are kept as Latin-1, as RFC
 * 9110 historically reads them. Nothing is percent-decoded: no standard says
 * a proxy encodes header values that way, and a login ID may contain "%".
 */
import type { Context } from 'koa';

/** The longest login ID, tenant, group or name accepted from a proxy. */
export const MAX_VALUE_LENGTH = 256;

/** C0 and C1 control characters; tabs included, since no identifier or name holds one. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export class HeaderValueError extends Error {
  constructor(readonly header: string, readonly reason: 'repeated' | 'control character' | 'too long') {
    super(`header ${header}: ${reason}`);
  }
}

/** Latin-1 string of the wire bytes → the text they encode. */
export function decodeHeaderText(raw: string): string {
  // Plain ASCII reads the same either way.
  if (!/[\u0080-\u00ff]/.test(raw)) return raw;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(raw, 'latin1'));
  } catch {
    return raw;
  }
}

/**
 * Strips spaces and tabs only: String.prototype.trim would also take a
 * trailing 0xA0 byte (NBSP in Latin-1), which ends the UTF-8 of "à".
 */
function trimBytes(raw: string): string {
  return raw.replace(/^[ \t]+|[ \t]+$/g, '');
}

/** Every occurrence of a header, as Node received it. */
function occurrences(ctx: Context, header: string): string[] {
  const distinct = ctx.req.headersDistinct?.[header];
  if (distinct) return distinct;
  const joined = ctx.get(header);
  return joined ? [joined] : [];
}

/**
 * A single-valued header (login ID, tenant, name): undefined when absent or
 * blank. A header sent twice is refused, since which one the proxy set
 * cannot be told; so are control characters and overlong values.
 */
export function singleValue(ctx: Context, header: string | undefined): string | undefined {
  const value = singleRaw(ctx, header);
  if (value === undefined) return undefined;
  return checked(header!, decodeHeaderText(value)) || undefined;
}

/** A single-valued header taken as it is (a token): only Node's header size limit bounds it. */
export function singleRaw(ctx: Context, header: string | undefined): string | undefined {
  if (!header) return undefined;
  const values = occurrences(ctx, header).map(trimBytes).filter(Boolean);
  if (values.length === 0) return undefined;
  if (values.length > 1) throw new HeaderValueError(header, 'repeated');
  return values[0];
}

/** A comma-separated list (groups); repeated headers add to it, as HTTP lists do. */
export function listValue(ctx: Context, header: string | undefined): string[] | undefined {
  if (!header) return undefined;
  const items = occurrences(ctx, header)
    .flatMap((v) => v.split(','))
    .map((item) => checked(header, decodeHeaderText(trimBytes(item))))
    .filter(Boolean);
  return items.length ? items : undefined;
}

/** The value without surrounding white space (Unicode's too, once decoded); refused with control characters or when too long. */
export function checked(header: string, value: string): string {
  if (CONTROL.test(value)) throw new HeaderValueError(header, 'control character');
  const trimmed = value.trim();
  if (trimmed.length > MAX_VALUE_LENGTH) throw new HeaderValueError(header, 'too long');
  return trimmed;
}
