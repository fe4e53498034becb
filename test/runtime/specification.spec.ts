/**
 * `/specification/`: the page that shows the interface description (Swagger
 * UI, runtime/specification.ts) is served by the service itself, below the
 * context path, without credentials, and loads nothing from anywhere else.
 */
import { expect } from 'chai';
import { startService, type TestService } from '../helpers/service.ts';

/** Every address an HTML page or a script names in src, href, url or a fetch. */
function referencesOf(text: string): string[] {
  return [...text.matchAll(/(?:src|href)\s*=\s*"([^"]+)"|url:\s*'([^']+)'/g)].map((m) => m[1] ?? m[2]);
}

describe('the interface description page', function () {
  this.timeout(180_000);
  let t: TestService;

  before(async () => {
    t = await startService({ SERVICE_CONTEXT_PATH: '/mms' });
  });
  after(() => t.close());

  it('answers at /specification/ with HTML and a policy that lets it load only from the service', async () => {
    const page = await t.request('/specification/', { auth: null });
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    const policy = page.headers.get('content-security-policy')!;
    expect(policy).to.include("default-src 'none'").and.include("script-src 'self'").and.include("connect-src 'self'");
    expect(policy).not.to.include('unsafe-eval');
    const html = await page.text();
    // No inline script: every script is a file of the service.
    expect([...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].every((m) => /src=/.test(m[1]) && m[2].trim() === '')).to.equal(true);
    const references = referencesOf(html);
    expect(references).to.have.members(['swagger-ui.css', 'swagger-ui-bundle.js', 'start.js']);
  });

  it('serves every asset the page names, with its type, and the document the page loads', async () => {
    const types: Record<string, RegExp> = { 'swagger-ui.css': /^text\/css/, 'swagger-ui-bundle.js': /^text\/javascript/, 'start.js': /^text\/javascript/ };
    for (const [name, type] of Object.entries(types)) {
      const r = await t.request(`/specification/${name}`, { auth: null });
      expect(r.status, name).to.equal(200);
      expect(r.headers.get('content-type'), name).to.match(type);
      expect(r.headers.get('x-content-type-options'), name).to.equal('nosniff');
      expect((await r.arrayBuffer()).byteLength, name).to.be.above(100);
    }
    const start = await (await t.request('/specification/start.js', { auth: null })).text();
    // Relative: below the context path; the online validator Swagger UI would ask is off.
    expect(referencesOf(start)).to.deep.equal(['openapi.json']);
    expect(start).to.match(/validatorUrl: null/);
    const document = await t.request('/specification/openapi.json', { auth: null });
    expect(document.status).to.equal(200);
    expect((await document.json()).servers).to.deep.equal([{ url: '/mms' }]);
  });

  it('names nothing off the machine in the page or its start script', async () => {
    for (const name of ['', 'start.js']) {
      const text = await (await t.request(`/specification/${name}`, { auth: null })).text();
      expect(text, name || 'page').not.to.match(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
    }
  });

  it('is not served outside the context path, nor at an address it does not have', async () => {
    expect((await fetch(t.url.replace(/\/mms$/, '/specification/'))).status).to.equal(404);
    expect((await t.request('/specification/index.html', { auth: null })).status).to.be.oneOf([401, 404]);
  });
});
