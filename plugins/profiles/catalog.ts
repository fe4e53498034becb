/**
 * Which profiles exist (decisions §6, §7.5): per tenant `annotations` (also
 * named after the tenant's label) and `profile`, uploadable by the tenant's
 * administrators; the named profiles its administrators create (annotations
 * too, which the schemes that name them apply); and the standard ones,
 * generated from the metamodel with the code, downloadable by anyone signed
 * in and never uploadable.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProfileKind } from './schema.ts';

export interface TenantProfile {
  kind: ProfileKind;
  filename: string;
  /**
   * What a tenant's profile is before anything was uploaded: a valid,
   * empty document of its kind, so that download, edit and upload work from
   * the start. Uploading these very bytes changes nothing.
   */
  initial: Buffer;
}

export interface StandardProfile {
  kind: ProfileKind;
  filename: string;
  bytes: Buffer;
}

const initial = (lines: string[]) => Buffer.from(`${lines.map((l) => (l ? `# ${l}` : '#')).join('\n')}\n{}\n`, 'utf8');

export const TENANT_PROFILES: Record<string, TenantProfile> = {
  annotations: {
    kind: 'annotations',
    filename: 'annotations.yaml',
    initial: initial([
      'The annotations of this tenant: none uploaded yet.',
      '',
      'Top-level keys are _type names (Classifier, BusinessAttribute, ...); the custom',
      'properties declared under a type are accepted under customProperties of its',
      'objects. The labels of the standard types are in the profile standard-annotations.',
    ]),
  },
  profile: {
    kind: 'profile',
    filename: 'profile.yaml',
    initial: initial([
      'The profile of this tenant (its view in the user interface): none uploaded yet.',
      '',
      'Top-level keys are _type names; under each, groups and how properties are',
      'shown. The standard view is the profile standard-profile.',
    ]),
  },
};

export const STANDARD_FILES: Record<string, { kind: ProfileKind; file: string }> = {
  'standard-annotations': { kind: 'annotations', file: 'standard-annotations.gen.yaml' },
  'standard-profile': { kind: 'profile', file: 'standard-profile.gen.yaml' },
};

/** Reads the standard profiles the generator wrote next to the rest of the generated code. */
export function loadStandardProfiles(generatedDir: string): Record<string, StandardProfile> {
  return Object.fromEntries(Object.entries(STANDARD_FILES).map(([name, { kind, file }]) => {
    const path = join(generatedDir, file);
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch {
      throw new Error(`the standard profile ${name} is missing (${path}); run npm run generate`);
    }
    return [name, { kind, filename: `${name}.yaml`, bytes }];
  }));
}

/** What a named profile is before its first upload: annotations that declare nothing. */
export function namedInitial(name: string): TenantProfile {
  return {
    kind: 'annotations',
    filename: `${name}.yaml`,
    initial: initial([
      `The named profile ${name} (annotations): nothing uploaded yet.`,
      '',
      'It applies to the objects of every scheme that names it under profiles, on top of',
      'the annotations of the tenant. Its shape is that of the annotations.',
    ]),
  };
}

/** Names of named profiles: letters (any language), digits, `_`, `-` and `.`, starting with a letter or digit. */
export const PROFILE_NAME = /^[\p{L}\p{N}][\p{L}\p{N}_.-]{0,99}$/u;
export const PROFILE_NAME_MAX = 100;

/** Names a named profile cannot have (compared without letter case): the standard ones and the tenant's own. */
export function reservedName(name: string, tenantLabel: string | null): boolean {
  const lower = name.toLowerCase();
  return [...Object.keys(STANDARD_FILES), ...Object.keys(TENANT_PROFILES), ...(tenantLabel !== null ? [tenantLabel] : [])]
    .some((n) => n.toLowerCase() === lower);
}
