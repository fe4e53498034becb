/**
 * The profile files the tests upload, and small helpers to change them at a
 * known line, so that a test can say where the reported problem must be.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type { TestService } from '../../helpers/service.ts';
import type { Credentials } from '../../auth/fixtures.ts';
import type { Violation } from '../../../runtime/errors.ts';

const DIR = new URL('../../fixtures/profiles/', import.meta.url);

export function fixture(name: string): Buffer {
  return readFileSync(new URL(name, DIR));
}

export const BANK = 'annotations-musterbank.yaml';
export const INSURER = 'annotations-versicherung.yaml';
export const VIEW = 'profile-fachansicht.yaml';

/** The 1-based number of the only line that holds `text`. */
export function lineOf(source: Buffer | string, text: string): number {
  const lines = source.toString().split('\n');
  const found = lines.flatMap((l, i) => (l.includes(text) ? [i + 1] : []));
  expect(found, `lines holding ${JSON.stringify(text)}`).to.have.length(1);
  return found[0];
}

/** The file with one occurrence of `from` replaced. */
export function edited(source: Buffer, from: string, to: string): Buffer {
  const text = source.toString();
  expect(text.split(from).length, `occurrences of ${JSON.stringify(from)}`).to.equal(2);
  return Buffer.from(text.replace(from, to));
}

/** A body fetch accepts. */
export function bytesOf(b: Buffer | string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.isBuffer(b) ? b : Buffer.from(b));
}

export function violationKeys(violations: Violation[]): string[] {
  return violations.map((v) => v.key);
}

export interface UploadOptions {
  as?: Credentials | null;
  tenant?: string;
  filename?: string;
  field?: string;
  language?: string;
}

/** Uploads one file as a browser would (multipart/form-data through fetch's FormData). */
export async function upload(t: TestService, db: string, name: string, bytes: Buffer, o: UploadOptions = {}): Promise<Response> {
  const form = new FormData();
  form.append(o.field ?? 'file', new Blob([new Uint8Array(bytes)], { type: 'application/yaml' }), o.filename ?? 'annotations.yaml');
  const headers: Record<string, string> = {};
  if (o.tenant) headers['service-tenant'] = o.tenant;
  if (o.language) headers['accept-language'] = o.language;
  return t.request(`/api/${db}/profiles/${encodeURIComponent(name)}/upload`, { method: 'PUT', body: form, headers, auth: o.as === undefined ? undefined : o.as });
}

export async function download(t: TestService, db: string, name: string, o: { as?: Credentials | null; tenant?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = o.tenant ? { 'service-tenant': o.tenant } : {};
  return t.request(`/api/${db}/profiles/${encodeURIComponent(name)}/download`, { headers, auth: o.as === undefined ? undefined : o.as });
}

/** A multipart body written by hand, for what FormData cannot send (two parts, odd headers). */
export function multipart(parts: { headers: string[]; body: Buffer | string }[], boundary = 'grenze-4711'): { body: Uint8Array<ArrayBuffer>; contentType: string } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n${p.headers.map((h) => `${h}\r\n`).join('')}\r\n`));
    chunks.push(Buffer.isBuffer(p.body) ? p.body : Buffer.from(p.body));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: new Uint8Array(Buffer.concat(chunks)), contentType: `multipart/form-data; boundary=${boundary}` };
}
