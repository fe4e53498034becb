/** Sign-in to the pages over HTTP, as a browser does it: the session cookie and the anti-forgery token. */
import { expect } from 'chai';
import type { TestService } from '../../helpers/service.ts';
import { rememberSecret } from '../../helpers/secrets.ts';

export interface WebSession {
  /** `name=value`, as a browser sends it back. */
  cookie: string;
  /** The whole Set-Cookie header, attributes included. */
  setCookie: string;
  csrfToken: string;
  body: Record<string, unknown>;
}

/** The Set-Cookie header of the session cookie, if the answer has one. */
export function sessionCookieOf(r: Response): string | undefined {
  return r.headers.getSetCookie().find((c) => c.startsWith('mds-'));
}

export async function postSession(t: TestService, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return t.request('/web/session', { method: 'POST', auth: null, headers, json: body });
}

/** Signs in by password; fails the test unless a session was opened. */
export async function signIn(t: TestService, body: { database?: string; loginId: string; password: string; tenant?: string }, headers: Record<string, string> = {}): Promise<WebSession> {
  const r = await postSession(t, body, headers);
  expect(r.status, `sign-in: ${r.status} ${r.status === 200 ? '' : await r.clone().text()}`).to.equal(200);
  const setCookie = sessionCookieOf(r);
  expect(setCookie, 'a session cookie').to.be.a('string');
  const json = await r.json();
  const cookie = setCookie!.split(';')[0];
  rememberSecret(cookie.slice(cookie.indexOf('=') + 1), 'session cookie');
  rememberSecret(json.csrfToken, 'anti-forgery token');
  return { cookie, setCookie: setCookie!, csrfToken: json.csrfToken, body: json };
}

/** Request options of the page: the cookie and the token (or another token), no Authorization. */
export function withSession(s: Pick<WebSession, 'cookie' | 'csrfToken'>, init: RequestInit & { json?: unknown } = {}, token: string | null = s.csrfToken) {
  const headers: Record<string, string> = { cookie: s.cookie, ...(init.headers as Record<string, string> | undefined) };
  if (token !== null) headers['x-csrf-token'] = token;
  return { ...init, auth: null, headers };
}
