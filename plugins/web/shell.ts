/**
 * The pages' HTML shell and assets, below `{ctx}/web`. Every answer there
 * carries a Content-Security-Policy that allows only the service's own
 * scripts and styles (no inline script, no inline style), forbids framing,
 * and keeps forms and connections on the service's own origin.
 */
import type { Context } from 'koa';
import type { Assets } from './build.ts';

export const CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
  + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export type SignInMode = 'password' | 'directory' | 'oidc' | 'preauth';

export function securityHeaders(ctx: Context): void {
  ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'same-origin');
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JSON inside a script element: `<` escaped, so that no `</script>` or `<!--` can end or change it. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/**
 * `session`: the page's session (the body of `GET /web/session`, with its
 * `database`), when the request's cookie holds a live one for the page's
 * scope: the page then starts without asking for it. The shell is never
 * stored (`no-store`) and only a page of the service's own origin can read
 * it, as it can read `GET /web/session`.
 */
export function shellHtml(assets: Assets, config: { contextPath: string; signIn: SignInMode; languages: string[]; defaultLanguage: string; session?: object }): string {
  const at = (name: string) => escapeHtml(`${config.contextPath}/web/assets/${name}`);
  return '<!doctype html><html lang="en"><head><meta charset="utf-8">\n'
    + '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
    + `<title>Metadata</title><link rel="icon" href="data:,"><link rel="stylesheet" href="${at(assets.style)}">\n`
    + `<script type="module" src="${at(assets.script)}"></script></head>\n`
    + '<body><div id="app"></div>\n'
    + `<script type="application/json" id="service-config">${scriptJson(config)}</script>\n`
    + '</body></html>\n';
}

/** A built file, compressed as the client accepts; cached for good, as its name changes with its content. */
export function sendAsset(ctx: Context, assets: Assets, name: string): boolean {
  const asset = assets.files.get(name);
  if (!asset) return false;
  ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
  ctx.set('Vary', 'Accept-Encoding');
  ctx.type = asset.type;
  const encoding = ctx.acceptsEncodings('br', 'gzip', 'identity');
  if (encoding === 'br') {
    ctx.set('Content-Encoding', 'br');
    ctx.body = asset.brotli;
  } else if (encoding === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = asset.gzip;
  } else {
    ctx.body = asset.body;
  }
  return true;
}
