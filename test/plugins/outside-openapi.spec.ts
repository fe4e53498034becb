/**
 * A plugin from outside the repository documents its calls like a built-in
 * one: the `openapi` fragment its manifest declares is added to the document
 * the service serves (the generator knows only the built-in plugins), and a
 * plugin that declares a path the document has already stops the start.
 */
import { fileURLToPath } from 'node:url';
import { relative } from 'node:path';
import { expect } from 'chai';
import { PluginError } from '../../runtime/plugins.ts';
import { startService, type TestService } from '../helpers/service.ts';

const fixture = (file: string) => `./${relative(process.cwd(), fileURLToPath(new URL(`../fixtures/documented-plugin/${file}`, import.meta.url)))}`;
const PLUGIN = fixture('index.mjs');

describe('the OpenAPI document of a plugin from outside the repository', function () {
  this.timeout(120_000);

  describe('with the plugin loaded', () => {
    let t: TestService;
    before(async () => {
      t = await startService({ SERVICE_PLUGINS: PLUGIN });
    });
    after(async () => t?.close());

    it('is served with the plugin\'s path, schema and tag, beside the built-in calls', async () => {
      for (const format of ['json', 'yaml']) {
        const r = await t.request(`/specification/openapi.${format}`, { auth: null });
        expect(r.status).to.equal(200);
        const text = await r.text();
        expect(text).to.include('getHello');
      }
      const document = await (await t.request('/specification/openapi.json', { auth: null })).json();
      expect(document.paths['/api/{db}/hello'].get.operationId).to.equal('getHello');
      expect(document.components.schemas.Hello.required).to.deep.equal(['loginId']);
      expect(document.tags.map((tag: { name: string }) => tag.name)).to.include('Hello');
      // The built-in calls are all still there.
      expect(document.paths['/api/{db}/session']).to.have.property('get');
      expect(document.components.schemas).to.have.property('Classifier');
    });

    it('answers the call it documents', async () => {
      await t.request('/api/admin/databases', { method: 'POST', json: { name: 'hello_db' } });
      const r = await t.request('/api/hello_db/hello');
      expect(r.status).to.equal(200);
      expect(await r.json()).to.deep.equal({ loginId: 'admin' });
    });
  });

  it('stops the start when the plugin declares a path the document has already', async () => {
    let error: unknown;
    try {
      const t = await startService({ SERVICE_PLUGINS: fixture('clash.mjs') });
      await t.close();
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(PluginError);
    expect((error as Error).message).to.equal('PLUGIN_INVALID: OpenAPI: plugin hello defines path /api/{db}/session, which is defined already');
  });
});
