/**
 * The upload body and the file names: multipart/form-data split exactly at
 * delimiter lines, Content-Disposition read (RFC 7578, RFC 5987) and written
 * (RFC 6266).
 */
import zlib from 'node:zlib';
import { expect } from 'chai';
import { attachment, cleanFilename, parseDisposition } from '../../../runtime/disposition.ts';
import { boundaryOf } from '../../../runtime/multipart.ts';
import { createDatabase, logLines, startService, type TestService } from '../../helpers/service.ts';
import { download, multipart } from './fixtures.ts';

describe('profiles: upload bodies and file names', () => {
  describe('Content-Disposition', () => {
    it('reads name, filename and filename* (which wins), with quotes and escapes', () => {
      expect(parseDisposition('form-data; name="file"; filename="Größe.yaml"')).to.deep.equal({ type: 'form-data', params: { name: 'file', filename: 'Größe.yaml' } });
      expect(parseDisposition('form-data; name=datei; filename="a \\"b\\".yaml"; filename*=UTF-8\'\'%C3%84nderung%3B.yaml')!.params)
        .to.deep.equal({ name: 'datei', filename: 'a "b".yaml', 'filename*': 'Änderung;.yaml' });
      expect(parseDisposition('FORM-DATA; NAME="x"; filename*=iso-8859-1\'de\'%E4.yaml')!.params).to.deep.equal({ name: 'x', 'filename*': 'ä.yaml' });
      expect(parseDisposition('form-data; name="x"; filename*=UTF-8\'\'%E4')!.params).to.deep.equal({ name: 'x' });
      expect(parseDisposition('')).to.equal(null);
    });

    it('keeps the file name only: no folders, no control characters, at most 255 characters', () => {
      expect(cleanFilename('C:\\Users\\erika\\Annotationen.yaml')).to.equal('Annotationen.yaml');
      expect(cleanFilename('../../etc/passwd')).to.equal('passwd');
      expect(cleanFilename('a\u0000b\r\nc.yaml')).to.equal('abc.yaml');
      expect(cleanFilename('   ')).to.equal(undefined);
      expect([...cleanFilename(`${'ä'.repeat(300)}.yaml`)!]).to.have.length(255);
    });

    it('writes filename* for non-ASCII names with an ASCII fallback, plain filename otherwise', () => {
      expect(attachment('annotations.yaml')).to.equal('attachment; filename="annotations.yaml"');
      expect(attachment('Anmerkungen Öl & Süß.yaml')).to.equal('attachment; filename="Anmerkungen Oel & Suess.yaml"; filename*=UTF-8\'\'Anmerkungen%20%C3%96l%20%26%20S%C3%BC%C3%9F.yaml');
      expect(attachment('Café „neu" (2).yaml')).to.equal('attachment; filename="Cafe _neu_ (2).yaml"; filename*=UTF-8\'\'Caf%C3%A9%20%E2%80%9Eneu%22%20%282%29.yaml');
      expect(attachment('日本.yaml')).to.equal('attachment; filename="__.yaml"; filename*=UTF-8\'\'%E6%97%A5%E6%9C%AC.yaml');
      expect(attachment('a"b.yaml')).to.equal('attachment; filename="a_b.yaml"; filename*=UTF-8\'\'a%22b.yaml');
    });

    it('knows a multipart/form-data content type and its boundary', () => {
      expect(boundaryOf('multipart/form-data; boundary=abc')).to.equal('abc');
      expect(boundaryOf('Multipart/Form-Data; charset=utf-8; boundary="a b:c"')).to.equal('a b:c');
      expect(boundaryOf('multipart/form-data')).to.equal('');
      expect(boundaryOf('multipart/mixed; boundary=abc')).to.equal(null);
      expect(boundaryOf('application/json')).to.equal(null);
    });
  });

  describe('bodies over HTTP', () => {
    let t: TestService;
    let db: string;
    before(async () => {
      t = await startService();
      db = await createDatabase(t);
    });
    after(() => t.close());

    async function put(body: Uint8Array<ArrayBuffer> | Buffer, contentType: string) {
      return t.request(`/api/${db}/profiles/annotations/upload`, { method: 'PUT', body: new Uint8Array(body), headers: { 'content-type': contentType } });
    }

    it('keeps CRLF line ends and lines that only start like the boundary, byte for byte', async () => {
      const yaml = Buffer.from('# Windows-Zeilenenden\r\ntheme:\r\n  x: 1\r\n--grenze-4711x: 2\r\n--grenze-4711 -x: 3\r\nGroup: {}\r\n');
      const m = multipart([{ headers: ['Content-Disposition: form-data; name="file"; filename="crlf.yaml"', 'Content-Type: application/yaml'], body: yaml }]);
      const r = await put(m.body, m.contentType);
      expect(r.status, await r.clone().text()).to.equal(200);
      const d = await download(t, db, 'annotations');
      expect(Buffer.from(await d.arrayBuffer()).equals(yaml)).to.equal(true);
    });

    it('ignores a preamble and an epilogue, and transport padding after a delimiter', async () => {
      const yaml = Buffer.from('Group:\n  customProperties:\n    turnus: { baseType: STRING }\n');
      const body = Buffer.concat([
        Buffer.from('Dies ist die Präambel.\r\n--b1   \r\nContent-Disposition: form-data; name="f"\r\n\r\n'),
        yaml,
        Buffer.from('\r\n--b1--\r\nEpilog'),
      ]);
      const r = await put(body, 'multipart/form-data; boundary=b1');
      expect(r.status, await r.clone().text()).to.equal(200);
      const d = await download(t, db, 'annotations');
      expect(Buffer.from(await d.arrayBuffer()).equals(yaml)).to.equal(true);
    });

    it('keeps the file byte for byte whether the body declares its length, comes in chunks without one, or is gzip-encoded', async () => {
      // Over 64 KB, so that the body arrives in several chunks: with a declared length they are written into one
      // buffer of that length as they come (multipart.ts, collector), otherwise joined at the end.
      const yaml = Buffer.from(`Group:\n  customProperties:\n${Array.from({ length: 3000 }, (_, i) => `    eigenschaft${i}: { baseType: STRING, label: "Größe ${i} – ${'x'.repeat(i % 17)}" }\n`).join('')}`);
      expect(yaml.length).to.be.above(150_000);
      const m = multipart([{ headers: ['Content-Disposition: form-data; name="file"; filename="gross.yaml"'], body: yaml }]);
      const stored = async () => Buffer.from(await (await download(t, db, 'annotations')).arrayBuffer());
      const declared = await put(m.body, m.contentType);
      expect(declared.status, await declared.clone().text()).to.equal(200);
      expect((await stored()).equals(yaml)).to.equal(true);
      await t.request(`/api/${db}/profiles/annotations`, { method: 'DELETE' });
      const pieces = [m.body.subarray(0, 1000), m.body.subarray(1000, 70_000), m.body.subarray(70_000)];
      const chunked = await t.request(`/api/${db}/profiles/annotations/upload`, {
        method: 'PUT',
        headers: { 'content-type': m.contentType },
        body: new ReadableStream({ pull(c) { const next = pieces.shift(); if (next) c.enqueue(next); else c.close(); } }),
        duplex: 'half',
      } as RequestInit);
      expect(chunked.status, await chunked.clone().text()).to.equal(200);
      expect((await stored()).equals(yaml)).to.equal(true);
      await t.request(`/api/${db}/profiles/annotations`, { method: 'DELETE' });
      const gzipped = await t.request(`/api/${db}/profiles/annotations/upload`, {
        method: 'PUT', body: new Uint8Array(zlib.gzipSync(m.body)), headers: { 'content-type': m.contentType, 'content-encoding': 'gzip' },
      });
      expect(gzipped.status, await gzipped.clone().text()).to.equal(200);
      expect((await stored()).equals(yaml)).to.equal(true);
    });

    it('refuses a transfer encoding other than the bytes as they are', async () => {
      const m = multipart([{ headers: ['Content-Disposition: form-data; name="f"', 'Content-Transfer-Encoding: base64'], body: Buffer.from('R3JvdXA6IHt9Cg==') }]);
      const r = await put(m.body, m.contentType);
      expect(r.status).to.equal(400);
      expect((await r.json()).violations[0].message).to.contain('base64');
    });

    it('answers 400 to a body far over the limit without reading it to its end', async () => {
      const chunk = new Uint8Array(1024 * 1024);
      let sent = 0;
      const failures = () => logLines.filter((l) => /"level":50/.test(l)).length;
      const failed = failures();
      const r = await t.request(`/api/${db}/profiles/annotations/upload`, {
        method: 'PUT',
        headers: { 'content-type': 'multipart/form-data; boundary=x' },
        body: new ReadableStream({
          pull(c) {
            if (sent++ < 100) c.enqueue(chunk);
            else c.close();
          },
        }),
        duplex: 'half',
      } as RequestInit).catch((err: Error) => err);
      // The server closes the connection: the client sees the 400 or, if it was still sending, a closed socket.
      if (r instanceof Response) expect(r.status).to.equal(400);
      expect(failures(), 'errors logged').to.equal(failed);
      // The service is still there.
      expect((await download(t, db, 'annotations')).status).to.equal(200);
    });
  });
});
