/**
 * The browser of the browser tests: one headless Chromium per test run
 * (Debian's package, installed by scripts/ensure-chromium.sh; CHROMIUM_PATH
 * names another), driven with playwright-core, shared by every spec and
 * closed after the run (test/helpers/root-hooks.ts).
 *
 * Each test opens its pages with `openPage`. The harness
 * - records every page's console errors and uncaught exceptions: after each
 *   test, a page that logged one fails the test (the pages must show no
 *   console error). A response the app expects and handles (a 4xx of a
 *   call: a refused sign-in, a 400 with violations, a 412) makes Chromium
 *   log "Failed to load resource"; those are not counted, a 5xx is;
 * - on a failed test, writes a screenshot and the console log of every page
 *   the test opened to `.tmp/browser-failures/`;
 * - checks accessibility with axe-core inside the page (`axe`), run through
 *   the debugging protocol, so the pages' Content-Security-Policy still
 *   holds for everything else.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';

const require = createRequire(import.meta.url);
export const FAILURES_DIR = path.resolve('.tmp/browser-failures');
const EXECUTABLE = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
/** Network errors the app answers itself (a refused sign-in, violations, a lost race): not console errors of the page. */
const HANDLED_RESPONSE = /^Failed to load resource: the server responded with a status of 4\d\d\b/;

let launching: Promise<Browser> | undefined;

export function browser(): Promise<Browser> {
  launching ??= chromium.launch({
    executablePath: EXECUTABLE,
    headless: true,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  return launching;
}

export async function closeBrowser(): Promise<void> {
  const started = launching;
  launching = undefined;
  if (started) await (await started).close().catch(() => undefined);
}

export interface OpenedPage {
  page: Page;
  context: BrowserContext;
  /** Console errors and uncaught exceptions so far. */
  errors: string[];
  /** Every console line, for the failure log. */
  log: string[];
}

/** Pages opened since the current test began (or in its describe's hooks): checked and, on failure, kept. */
const opened: OpenedPage[] = [];

/**
 * A fresh browser context (its own cookies) with one page. `width` 390 gives
 * a phone's viewport; `locale` sets the browser's language (Accept-Language
 * and navigator.languages).
 */
export async function openPage(options: { width?: number; height?: number; locale?: string; context?: BrowserContextOptions } = {}): Promise<OpenedPage> {
  const context = await (await browser()).newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? (options.width && options.width < 600 ? 844 : 800) },
    locale: options.locale ?? 'en-US',
    ...options.context,
  });
  const page = await context.newPage();
  const result: OpenedPage = { page, context, errors: [], log: [] };
  page.on('console', (message) => {
    const line = `${message.type()}: ${message.text()}`;
    result.log.push(line);
    if (message.type() === 'error' && !HANDLED_RESPONSE.test(message.text())) result.errors.push(line);
  });
  page.on('pageerror', (error) => {
    const line = `pageerror: ${error.message}`;
    result.log.push(line);
    result.errors.push(line);
  });
  opened.push(result);
  return result;
}

/** axe-core's violations of at least `serious` impact on the page as it is now. */
export async function axe(page: Page): Promise<{ id: string; impact: string; help: string; nodes: string[] }[]> {
  const source = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source);
  const violations = await page.evaluate(async () => {
    const run = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe.run;
    const result = await run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

function fileName(title: string): string {
  return title.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 150);
}

/**
 * Root hook, after every test: on failure the screenshot and console log of
 * each page the test opened; then a page with console errors fails the test.
 * Pages whose context was closed are forgotten.
 */
export async function afterBrowserTest(test: Mocha.Test | undefined): Promise<void> {
  if (!opened.length || !test) return;
  const live = opened.filter((o) => !o.page.isClosed());
  opened.length = 0;
  opened.push(...live);
  if (test.state === 'failed') {
    fs.mkdirSync(FAILURES_DIR, { recursive: true });
    const base = fileName(test.fullTitle());
    for (const [i, o] of live.entries()) {
      const name = `${base}${live.length > 1 ? `-${i + 1}` : ''}`;
      await o.page.screenshot({ path: path.join(FAILURES_DIR, `${name}.png`), fullPage: true }).catch(() => undefined);
      fs.writeFileSync(path.join(FAILURES_DIR, `${name}.log`), [`url: ${o.page.url()}`, ...o.log].join('\n') + '\n');
    }
    console.log(`    browser: screenshots and console logs of ${live.length} page(s) in ${FAILURES_DIR}`);
    for (const o of live) o.errors.length = 0;
    return;
  }
  const noisy = live.filter((o) => o.errors.length);
  for (const o of noisy) o.errors.length = 0;
  if (noisy.length) {
    throw new Error(`the page logged errors to the console:\n${noisy.map((o) => `${o.page.url()}\n  ${o.log.join('\n  ')}`).join('\n')}`);
  }
}
