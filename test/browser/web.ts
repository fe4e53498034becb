/**
 * What the browser specs of the user interface share: a service with the
 * web plugin, signing in through the page's own form, and small REST
 * helpers to make and change objects beside the page.
 */
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import { openPage, type OpenedPage } from '../helpers/browser.ts';
import { ADMIN, startService, type TestService } from '../helpers/service.ts';
import type { Credentials } from '../auth/fixtures.ts';

export type Json = Record<string, any>;

export interface Web {
  t: TestService;
  /** The service's address with its context path; the pages are below `${base}/web/`. */
  base: string;
  close(): Promise<void>;
}

export async function startWeb(env: Record<string, string> = {}): Promise<Web> {
  const t = await startService(env);
  return { t, base: t.url, close: () => t.close() };
}

const contexts: BrowserContext[] = [];

/** A page of the shared browser (test/helpers/browser.ts), its context closed by `closePages` before the next test. */
export async function open(options: Parameters<typeof openPage>[0] = {}): Promise<OpenedPage> {
  const opened = await openPage(options);
  contexts.push(opened.context);
  return opened;
}

/** Closes the contexts of the previous test (run before each: a failed test's pages stay open for the harness's screenshots). */
export async function closePages(): Promise<void> {
  const closing = contexts.splice(0);
  await Promise.all(closing.map((c) => c.close().catch(() => undefined)));
}

/** Opens `path` (below the base) and signs in through the page's form; waits for the page to leave the form. */
export async function signIn(page: Page, web: Web, path: string, as: Credentials = ADMIN, tenant?: string): Promise<void> {
  await page.goto(`${web.base}${path}`);
  await page.getByLabel(/^(Login ID|Anmeldename)$/).fill(as.loginId);
  await page.getByLabel(/^(Password|Passwort)$/).fill(as.password);
  if (tenant) await page.getByLabel(/^(Tenant|Mandant)/).fill(tenant);
  await page.getByRole('button', { name: /^(Sign in|Anmelden)$/ }).click();
  await page.locator('#signin-login').waitFor({ state: 'detached' });
}

/** A REST call as the administrator (Basic), expecting a status; the parsed body. */
export async function rest(web: Web, method: string, path: string, status: number, json?: unknown, headers: Record<string, string> = {}): Promise<Json> {
  const r = await web.t.request(path, { method, json, headers });
  const text = await r.text();
  expect(r.status, `${method} ${path}: ${text}`).to.equal(status);
  return text ? JSON.parse(text) : {};
}

/** The path of an object's page (its `href` without the host). */
export function pageOf(obj: Json): string {
  return new URL(obj.href).pathname;
}
