/**
 * Request bodies. A body is read only after the caller is known and may
 * write at the address (401 and 403 come before a byte of it is read, so a
 * caller who may not write cannot make the service parse anything); it is
 * decoded from its Content-Encoding within the body limit, which counts the
 * decoded bytes (a compressed bomb stops at the limit); and JSON is parsed
 * strictly, refusing `__proto__`, which would change an object's prototype
 * wherever the payload is copied key by key.
 */
import { PassThrough, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import bourne from '@hapi/bourne';
import { createError, ServiceError } from './errors.ts';
import { requireLevel } from './auth/middleware.ts';
import type { AccessLevel, Principal } from './auth/types.ts';

/** The encodings a body may be sent in, and their decoders (zlib's `unzip` takes gzip and zlib-wrapped deflate). */
const DECODERS: Record<string, (() => zlib.Gunzip | zlib.Unzip | zlib.BrotliDecompress) | null> = {
  identity: null,
  gzip: () => zlib.createUnzip(),
  deflate: () => zlib.createUnzip(),
  br: () => zlib.createBrotliDecompress(),
};

export const BODY_ENCODINGS = Object.keys(DECODERS);

export function hasBody(ctx: Context): boolean {
  return Number(ctx.get('content-length') || 0) > 0 || !!ctx.get('transfer-encoding');
}

/** The body's Content-Encoding; one the service does not decode (or a list of several) is 415. */
function bodyEncoding(ctx: Context): string {
  const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
  if (!Object.hasOwn(DECODERS, encoding)) throw createError('UNSUPPORTED_ENCODING', { encoding, accepted: BODY_ENCODINGS.join(', ') });
  return encoding;
}

/**
 * The one rule before any body is read: the caller is signed in (the
 * authentication middleware answered 401 otherwise) and its access level
 * can write at the address.
 */
function mayWriteHere(ctx: Context, level: AccessLevel): Principal {
  const principal = ctx.state.principal as Principal | undefined;
  if (!principal) throw createError('UNAUTHENTICATED');
  if (!principal.systemAdmin) requireLevel(principal, level);
  return principal;
}

export interface DecodedBody {
  stream: Readable;
  encoding: string;
  /** Whether decoding failed: the bytes were not what Content-Encoding says. */
  failed(): boolean;
  /** Whether part of the request was never read: its connection cannot carry another request. */
  unread(): boolean;
}

/** The request's body as sent, decoded, for a caller who may write at the address. */
export function decodedBody(ctx: Context, level: AccessLevel): DecodedBody {
  mayWriteHere(ctx, level);
  return decode(ctx, bodyEncoding(ctx));
}

/** Decoding errors are marked, so that they can be told from the connection's. */
function decode(ctx: Context, encoding: string): DecodedBody {
  const decoder = DECODERS[encoding]?.();
  const unread = () => !ctx.req.complete;
  if (!decoder) return { stream: ctx.req, encoding, failed: () => false, unread };
  let failed = false;
  const out = new PassThrough();
  decoder.once('error', (err) => {
    failed = true;
    out.destroy(err);
  });
  // A client that leaves before the end of its body ends the reading too (pipe does not pass that on).
  ctx.req.once('close', () => {
    if (!ctx.req.complete) out.destroy(Object.assign(new Error('request aborted'), { type: 'request.aborted' }));
  });
  ctx.req.pipe(decoder).pipe(out);
  return { stream: out, encoding, failed: () => failed, unread };
}

/**
 * Translates what reading a body may throw: the request's fault is a 4xx,
 * never a 500. When the body was not read to its end, the answer closes the
 * connection: what is left of the body would be taken for the next request.
 */
export function bodyError(err: unknown, body: DecodedBody): unknown {
  if (err instanceof ServiceError) return err;
  const headers: Record<string, string> = body.unread() ? { Connection: 'close' } : {};
  if (body.failed()) return createError('INVALID_ENCODING', { encoding: body.encoding }, [], headers);
  const type = (err as { type?: string }).type;
  if (type === 'entity.too.large') return createError('PAYLOAD_TOO_LARGE', {}, [], headers);
  // A body shorter or longer than its Content-Length, or a client that left before its end.
  if (type === 'request.size.invalid' || type === 'request.aborted') return createError('BAD_REQUEST', {}, [], headers);
  return err;
}

/** Reads a JSON body within the limit into `ctx.request.body`; a request without a body keeps none. */
export async function readJsonBody(ctx: Context, level: AccessLevel | null, limitBytes: number): Promise<void> {
  if (level !== null) mayWriteHere(ctx, level);
  if (!hasBody(ctx)) return;
  if (!ctx.get('content-type')) throw createError('CONTENT_TYPE_MISSING', { expected: 'application/json' });
  if (!ctx.is('application/json', '+json')) {
    throw createError('UNSUPPORTED_MEDIA_TYPE', { contentType: ctx.get('content-type'), expected: 'application/json' });
  }
  const body = decode(ctx, bodyEncoding(ctx));
  const identity = body.encoding === 'identity';
  if (identity && Number(ctx.get('content-length') || 0) > limitBytes) throw createError('PAYLOAD_TOO_LARGE');
  let text: string;
  try {
    text = await getRawBody(body.stream, { limit: limitBytes, length: identity ? ctx.get('content-length') || undefined : undefined, encoding: 'utf8' });
  } catch (err) {
    throw bodyError(err, body);
  }
  ctx.request.body = parseJson(text);
}

/** Objects and arrays only (the strict JSON of write payloads); `{}` for an empty body, as the body parser gave before. */
function parseJson(text: string): unknown {
  if (!text) return {};
  if (!/^[\x20\x09\x0a\x0d]*[[{]/.test(text)) throw createError('INVALID_JSON');
  try {
    return bourne.parse(text, { protoAction: 'error' });
  } catch {
    // Valid JSON refused all the same: it holds `__proto__`.
    if (isJson(text)) throw createError('RESERVED_PROPERTY', { name: '__proto__' });
    throw createError('INVALID_JSON');
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The JSON body reader of the /rest and /api interfaces, bound to the configured limit. */
export type JsonBodyReader = (ctx: Context, level: AccessLevel | null) => Promise<void>;

export function jsonBodyReader(limitBytes: number): JsonBodyReader {
  return (ctx, level) => readJsonBody(ctx, level, limitBytes);
}

declare module 'koa' {
  interface Request {
    /** The parsed JSON body (readJsonBody); undefined when the request has none. */
    body?: unknown;
  }
}
