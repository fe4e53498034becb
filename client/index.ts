/**
 * The typed client of the service, exported by the package as `./client`.
 *
 * Calls are typed by the OpenAPI document: `generated/api.gen.ts` is
 * openapi-typescript's translation of it (generator/emitters/client.ts), and
 * openapi-fetch does the requests. So a path the document does not have, a
 * missing path parameter or a number where a label belongs does not compile,
 * and every answer is typed with the schema the document gives for its
 * status. This module adds only what the service needs on top: its base URL
 * with the context path, its ways of signing in and its headers.
 *
 * It imports nothing of the service (a client runs elsewhere: the command-line
 * tool, the user interface in a browser, the benchmarks), only the generated
 * types and openapi-fetch, and it runs wherever `fetch` does.
 */
import createFetchClient, { type Client } from 'openapi-fetch';
import type { components, paths } from '../generated/api.gen.ts';

export type { components, operations, paths } from '../generated/api.gen.ts';

/** The schemas of the document by name: `Schemas['ClassifierWrite']`, `Schemas['Error']`. */
export type Schemas = components['schemas'];

/** The error payload of the specification, which every 4xx and 5xx carries. */
export type ServiceErrorPayload = Schemas['Error'];

export type ServiceClient = Client<paths>;

/** How the client signs in; an access key may be given besides (with OpenID Connect, a client-credentials token plus a key). */
export type Authorization =
  /** Login ID and password (`Authorization: Basic`), checked by the service or by the directory. */
  | { loginId: string; password: string }
  /** A bearer token (`Authorization: Bearer`), e.g. an OpenID Connect access token. */
  | { bearer: string };

export interface ClientOptions {
  /** Where the service is, with its context path if it has one: `http://127.0.0.1:8080` or `https://example.org/mms`. */
  baseUrl: string;
  authorization?: Authorization;
  /** An access key (`service-access-key`); identifies its user and that user's tenant. */
  accessKey?: string;
  /** The tenant to sign in to (`service-tenant`), by label. */
  tenant?: string;
  /** Language of the service's messages (`Accept-Language`). */
  language?: 'en' | 'de';
  /** Further headers sent with every call. */
  headers?: Record<string, string>;
  /** A fetch of one's own (tests, proxies); the platform's by default. */
  fetch?: (request: Request) => Promise<Response>;
}

/** A client for one service and one set of credentials; its calls are `client.GET('/rest/{db}/schemes', { params: { path: { db } } })` and so on. */
export function createClient(options: ClientOptions): ServiceClient {
  return createFetchClient<paths>({
    // Paths of the document start with `/`, so a context path must not end with one.
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: serviceHeaders(options),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

function serviceHeaders(options: ClientOptions): Record<string, string> {
  const headers: Record<string, string> = { ...options.headers };
  const auth = options.authorization;
  if (auth && 'bearer' in auth) headers.authorization = `Bearer ${auth.bearer}`;
  else if (auth) headers.authorization = `Basic ${basicCredentials(auth.loginId, auth.password)}`;
  if (options.accessKey !== undefined) headers['service-access-key'] = options.accessKey;
  if (options.tenant !== undefined) headers['service-tenant'] = options.tenant;
  if (options.language !== undefined) headers['accept-language'] = options.language;
  return headers;
}

/** `loginId:password` in Base64 of its UTF-8 bytes (RFC 7617), with what browsers and Node both have. */
function basicCredentials(loginId: string, password: string): string {
  if (loginId.includes(':')) throw new TypeError('A login ID for Basic authentication cannot contain a colon.');
  let binary = '';
  for (const byte of new TextEncoder().encode(`${loginId}:${password}`)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * An answer of the service outside 2xx, with the specification's error
 * payload. Its message says the method, the path and the service's message;
 * it never carries the request's credentials.
 */
export class ServiceError extends Error {
  readonly status: number;
  readonly payload: ServiceErrorPayload | undefined;

  constructor(response: Response, payload: unknown) {
    const error = isErrorPayload(payload) ? payload : undefined;
    const path = new URL(response.url || 'http://unknown/').pathname;
    super(`${response.status} from ${path}: ${error?.message ?? (typeof payload === 'string' ? payload : response.statusText)}`);
    this.name = 'ServiceError';
    this.status = response.status;
    this.payload = error;
  }
}

function isErrorPayload(value: unknown): value is ServiceErrorPayload {
  return typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string' && typeof (value as { statusCode?: unknown }).statusCode === 'number';
}

/**
 * The data of a successful answer, or a `ServiceError` thrown: for callers
 * that treat any refusal as a failure (setup code, scripts), so that they do
 * not test `error` after every call.
 */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new ServiceError(response, error);
  return data as T;
}
