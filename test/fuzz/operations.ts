/**
 * What the fuzz test calls: every path and method of the served OpenAPI
 * document (the plugins' calls included) and the real objects their path
 * parameters name.
 */
import { expect } from 'chai';
import type { TestService } from '../helpers/service.ts';
import { createUser, secret, type Credentials } from '../auth/fixtures.ts';
import { resolve, type Json } from './values.ts';

export interface Operation {
  method: string;
  /** The path with `{name}` parameters, as the document writes it. */
  template: string;
  /** Query and header parameters (resolved). */
  parameters: Json[];
  /** The JSON schema of the body, if the operation takes one. */
  body?: Json;
  multipart?: boolean;
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete'];

/** Every operation, in an order that reads before it writes and removes last, so that writes find the objects reads found. */
export function operationsOf(doc: Json): Operation[] {
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries<Json>(doc.paths)) {
    for (const method of METHODS.filter((m) => item[m])) {
      const op = item[method];
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Json) => resolve(p, doc)).filter((p: Json) => p.in !== 'path');
      const content = op.requestBody?.content ?? {};
      operations.push({
        method: method.toUpperCase(), template, parameters,
        ...(content['application/json'] ? { body: content['application/json'].schema } : {}),
        ...(content['multipart/form-data'] ? { multipart: true } : {}),
      });
    }
  }
  const phase = (m: string) => ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'].indexOf(m);
  return operations.sort((a, b) => phase(a.method) - phase(b.method) || (a.template < b.template ? -1 : a.template > b.template ? 1 : 0));
}

export interface Fixtures {
  db: string;
  /** A database of its own for the administration calls: DELETE removes it. */
  spare: string;
  /** Keys (technical and business) of a real object by the list name that precedes `{key}`. */
  keys: Record<string, string[]>;
  /** Technical keys of an object of each type, for references and `id`s. */
  ids: Record<string, string>;
  job: string;
  accessKey: string;
  editor: Credentials;
  reader: Credentials;
}

/** Real objects of every kind the paths name, made as a client makes them. */
export async function makeFixtures(t: TestService, db: string, spare: string): Promise<Fixtures> {
  const post = async (path: string, json: unknown, headers: Record<string, string> = {}): Promise<Json> => {
    const r = await t.request(`/rest/${db}/${path}`, { method: 'POST', json, headers });
    const text = await r.text();
    expect(r.status, `${path}: ${text}`).to.equal(201);
    return JSON.parse(text);
  };
  const scheme = await post('schemes', { _type: 'Scheme', label: 'Fuzz' });
  const classifier = await post('schemes/Fuzz/classifiers', { _type: 'Classifier', label: 'C' });
  const attribute = await post('schemes/Fuzz/classifiers/C/attributes', { _type: 'BusinessAttribute', label: 'A' });
  const other = await post('schemes/Fuzz/classifiers/C/attributes', { _type: 'BusinessAttribute', label: 'B' });
  const enumeration = await post('schemes/Fuzz/enumerations', { _type: 'Enumeration', label: 'E' });
  const literal = await post('schemes/Fuzz/enumerations/E/literals', { _type: 'Literal', label: 'L' });
  const collection = await post('schemes/Fuzz/collections', { _type: 'Collection', label: 'Col' });
  const processing = await post('schemes/Fuzz/processings', { _type: 'Processing', label: 'Proc' });
  const org = await post('organizations', { _type: 'Organization', label: 'Org' });
  const person = await post('organizations/Org/persons', { _type: 'Person', givenName: 'Pia' });
  const group = await post('organizations/Org/groups', { _type: 'Group', label: 'G' });
  const attribution = await post('schemes/Fuzz/attributedTo', { _type: 'Attribution', attributedTo: person.id });
  const derivation = await post(`attributes/${attribute.id}/derivedTo`, { _type: 'Derivation', derivedTo: other.id });
  const tenant = await post('tenants', { _type: 'Tenant', label: 'Second' });
  const editor = { loginId: 'fuzz-editor', password: secret('fuzz-editor-1') };
  const reader = { loginId: 'fuzz-reader', password: secret('fuzz-reader-1') };
  const user = await createUser(t, db, { ...editor, accessLevel: 'EDITOR', tenant: 'Second' }) as Json;
  await createUser(t, db, { ...reader, accessLevel: 'READ_ONLY' });
  const key = await post(`users/${user.id}/accessKeys`, { description: 'fuzz' }, { 'service-tenant': 'Second' });
  const job = await t.request(`/api/${db}/queries/download?format=JSON`, { method: 'POST', json: { sql: 'select label from scheme_view' } });
  const both = (o: Json) => [o.id, o.label].filter((k) => typeof k === 'string').map((k) => encodeURIComponent(k));
  const keys: Record<string, string[]> = {
    schemes: both(scheme), classifiers: both(classifier), attributes: both(attribute), enumerations: both(enumeration), literals: both(literal),
    collections: both(collection), processings: both(processing), activities: [processing.id], assets: [scheme.id, org.id], organizations: both(org),
    persons: [person.id], groups: both(group), attributions: [attribution.id], derivations: [derivation.id], tenants: ['Default', tenant.id], users: [user.id, 'fuzz-reader'],
  };
  const made = [scheme, classifier, attribute, enumeration, literal, collection, processing, org, person, group, attribution, derivation, tenant, user];
  const ids: Record<string, string> = { ...Object.fromEntries(made.map((o) => [o._type, o.id])), Asset: scheme.id, Activity: processing.id, Resource: org.id };
  return { db, spare, keys, ids, job: String((await job.json()).id), accessKey: key.id, editor, reader };
}

/** The path with every parameter filled by a real value. */
export function filled(template: string, f: Fixtures, choice: number): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string, at: number) => {
    if (name === 'db') return f.db;
    if (name === 'name') return f.spare;
    if (name === 'job') return f.job;
    if (name === 'accessKey') return f.accessKey;
    if (name === 'profile') return ['annotations', 'profile', 'standard-annotations', 'nope'][choice % 4];
    const list = template.slice(0, at).split('/').filter(Boolean).pop()!;
    const keys = f.keys[list] ?? [f.ids.Scheme];
    return keys[choice % keys.length];
  });
}
