/**
 * The browser harness itself (test/helpers/browser.ts): it sees a page's
 * console errors and uncaught exceptions, leaves alone a 4xx the page
 * handles, and axe-core reports a serious violation through the page's
 * Content-Security-Policy.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { axe, openPage } from '../helpers/browser.ts';

describe('browser harness', function () {
  this.timeout(60_000);
  let server: http.Server;
  let base: string;

  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/app.js') {
        res.setHeader('Content-Type', 'text/javascript');
        res.end(`fetch('/missing').then(() => { console.log('handled'); });
          if (location.hash === '#throw') setTimeout(() => { throw new Error('boom'); });`);
        return;
      }
      if (req.url === '/missing') {
        res.statusCode = 404;
        res.end('{}');
        return;
      }
      res.setHeader('Content-Type', 'text/html');
      res.setHeader('Content-Security-Policy', "default-src 'none'; script-src 'self'; connect-src 'self'; img-src data:");
      res.end(`<!doctype html><html><head><title>t</title><script src="/app.js"></script></head>
        <body><main><img src="data:,"><button></button></main></body></html>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('records uncaught exceptions but not a handled 4xx', async () => {
    const quiet = await openPage();
    const handled = quiet.page.waitForEvent('console', (m) => m.text() === 'handled');
    await quiet.page.goto(`${base}/`);
    await handled;
    expect(quiet.errors).to.deep.equal([]);
    const loud = await openPage();
    const thrown = loud.page.waitForEvent('pageerror');
    await loud.page.goto(`${base}/#throw`);
    await thrown;
    expect(loud.errors.join()).to.contain('boom');
    loud.errors.length = 0;
    await quiet.context.close();
    await loud.context.close();
  });

  it('runs axe-core inside a page whose policy forbids inline script', async () => {
    const { page, context } = await openPage();
    await page.goto(`${base}/`);
    const ids = (await axe(page)).map((v) => v.id);
    // An image without alt text and a button without a name are critical.
    expect(ids).to.include.members(['image-alt', 'button-name']);
    await context.close();
  });
});
