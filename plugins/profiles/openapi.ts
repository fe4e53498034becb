/** The profile interface's calls in the OpenAPI document (runtime/openapi-fragment.ts). */
import { DATABASE_PARAMETERS, errors, json, jsonBody, pathParameter, queryParameter, ref, type OpenApiFragment } from '../../runtime/host.ts';
import { PROFILE_NAME_MAX, STANDARD_FILES, TENANT_PROFILES } from './catalog.ts';

const STANDARD = Object.keys(STANDARD_FILES);
const STRING = { type: 'string' };
const FLAG = { type: 'boolean' };
const NUMBER = { type: 'number' };
const LANGUAGES = { de: STRING, en: STRING };
const PASSED_ON = { type: 'object', additionalProperties: true, description: 'Keys of the annotations that the service keeps but does not interpret, handed on as they are.' };

/** Label, description and presentation: what every annotated thing has. */
const presented = (what: string) => ({
  label: { ...STRING, description: `Label of the ${what} in the language of the answer: the annotations' (tenant over standard), else its name.` },
  labels: { type: 'object', additionalProperties: false, required: ['de', 'en'], properties: LANGUAGES, description: 'The label in both languages.' },
  description: { ...STRING, description: "Tooltip in the language of the answer: the annotations' `title`, else the metamodel's description." },
  descriptions: { type: 'object', additionalProperties: false, properties: LANGUAGES, description: 'The description in both languages, where there is one.' },
  hidden: FLAG,
  annotations: PASSED_ON,
});
const placed = { group: { ...STRING, description: 'Name of a group of the type.' }, order: { ...NUMBER, description: 'Position; things without come last, in their own order.' } };
const ICON = { ...STRING, description: "The annotations' `icon`: a name the user interface knows (e.g. `fa-cube`), handed on as written." };
const SCALAR = { type: ['string', 'number', 'boolean'] };
/** What a form shows of a field besides its label (annotations `width`, `placeholder`). */
const FIELD = {
  width: { type: ['number', 'string'], description: 'Width of the field: pixels, or a CSS length (`200px`, `40%`, `12em`).' },
  placeholder: { ...STRING, description: 'Text shown in the empty field.' },
};
const LIMITS = {
  type: 'object',
  description: "The limits of a value as written (JSON Schema keywords: `maxLength`, `minLength`, `minimum`, `maximum`, `pattern`, `format`, `minItems`), as the service's validators apply them.",
  additionalProperties: true,
};

const profile = (names: string[]) => pathParameter(
  'profile',
  "Name of the profile: a standard one, the tenant's (`annotations`, also called by the tenant's label, and `profile`) or a named one the tenant's administrators created.",
  { type: 'string', minLength: 1, examples: names },
);
const ALL_NAMES = [...Object.keys(TENANT_PROFILES), ...STANDARD];
/** What a name stands for (origin) and when it last changed. */
const PROFILE_INFO = ref('schemas', 'ProfileInfo');

export const openapi: OpenApiFragment = {
  tags: [{ name: 'Profiles', description: "The login tenant's annotations (custom properties) and profile (what the user interface shows), as YAML files, and the metamodel as they present it." }],
  components: {
    schemas: {
      ProfileInfo: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'kind', 'origin', 'filename', 'modifiedBy', 'dateModified'],
        properties: {
          name: { ...STRING, description: 'The name the profile is called by.' },
          kind: { type: 'string', enum: ['annotations', 'profile'], description: 'What it holds: annotations (labels and custom properties; every named profile) or a profile (the view, statuses).' },
          origin: {
            type: 'string',
            enum: ['standard', 'tenant', 'named'],
            description: "`standard`: delivered with the service (read only); `tenant`: the tenant's own (`annotations`, its label, `profile`; never deleted); `named`: created by an administrator of the tenant, applied to the schemes that name it under `profiles`.",
          },
          aliasOf: { type: 'string', enum: ['annotations'], description: "For the tenant's label: the profile it is another name for." },
          filename: { ...STRING, description: 'The name of the file a download gives.' },
          modifiedBy: { type: ['string', 'null'], description: 'Login ID of whoever created or last uploaded it; null for a standard profile and one never uploaded.' },
          dateModified: { type: ['number', 'null'], description: 'When it was created or last uploaded, in epoch milliseconds; null as `modifiedBy`.' },
        },
      },
      ResolvedMetamodel: {
        type: 'object',
        additionalProperties: false,
        required: ['language', 'types', 'settings'],
        properties: {
          language: { type: 'string', enum: ['de', 'en'], description: 'Language of `label` and `description` throughout.' },
          types: { type: 'object', additionalProperties: ref('schemas', 'ResolvedType'), description: 'Every type of the metamodel by its `_type` name.' },
          settings: { type: 'object', additionalProperties: true, description: "The top-level keys of the tenant's annotations and profile that are not types (themes and the like), the profile's over the annotations'." },
        },
      },
      ResolvedType: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'supertypes', 'abstract', 'concreteTypes', 'subtypes', 'plural', 'root', 'label', 'labels', 'descriptions', 'hidden', 'groups', 'properties', 'lists', 'annotations'],
        properties: {
          name: STRING,
          supertype: { ...STRING, description: 'The direct supertype.' },
          supertypes: { type: 'array', items: STRING, description: 'Every supertype, nearest first.' },
          abstract: FLAG,
          concreteTypes: { type: 'array', items: STRING, description: 'The concrete types an object of this type may have (itself, if concrete).' },
          subtypes: { type: 'array', items: STRING, description: 'The direct subtypes.' },
          plural: { ...STRING, description: 'Path segment of its lists.' },
          root: { ...FLAG, description: 'Whether its objects stand at the root (a top-level list of their own).' },
          owner: {
            type: 'object',
            additionalProperties: false,
            required: ['property', 'type'],
            description: 'The reference to the object it belongs to (its parent), where the type has exactly one; see `owners`.',
            properties: { property: STRING, type: STRING },
          },
          owners: {
            type: 'array',
            description: 'The writable parent references (decisions §7.1): one per kind of parent, exactly one set on an object; writing another moves it.',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['property', 'type', 'parentTypes'],
              properties: { property: STRING, type: STRING, parentTypes: { type: 'array', items: STRING, description: 'The concrete types of parent it names.' } },
            },
          },
          modelTypes: { type: 'array', items: STRING, description: 'The kinds of model (`modelType`) whose schemes may hold objects of the type; absent: every kind.' },
          labelFrom: { type: 'array', items: STRING, description: 'The properties its label is formed from, where it is not given.' },
          ...presented('type'),
          pluralLabel: { ...STRING, description: "The annotations' `plural` (German) or `pluralEn`, in the language of the answer; only where one of them is given." },
          pluralLabels: { type: 'object', additionalProperties: false, required: ['de', 'en'], properties: LANGUAGES, description: 'The plural label in both languages, each falling back to the other.' },
          gender: { ...STRING, description: "The annotations' grammatical gender of the label (e.g. `m`, `f`, `n`), as written." },
          icon: ICON,
          extends: { ...STRING, description: "The type whose annotations this one has as well (annotations' `extends`); its own win." },
          order: { ...NUMBER, description: 'Position among the types (menus, start page).' },
          stereotypes: { type: 'array', items: ref('schemas', 'ResolvedStereotype'), description: "The stereotypes the annotations declare for the type, in order. A stereotype's custom properties are in `properties`, with `when: { property: 'stereotype', literal: <name> }`." },
          groups: { type: 'array', items: ref('schemas', 'ResolvedGroup'), description: 'Groups of fields, in order.' },
          properties: { type: 'array', items: ref('schemas', 'ResolvedProperty'), description: 'Standard and custom properties, in display order.' },
          lists: { type: 'array', items: ref('schemas', 'ResolvedList'), description: 'Lists below its objects, in display order.' },
        },
      },
      ResolvedGroup: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'label', 'labels', 'descriptions', 'hidden', 'annotations'],
        properties: { name: STRING, ...presented('group'), order: NUMBER, icon: ICON },
      },
      ResolvedStereotype: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'label', 'labels', 'descriptions', 'hidden', 'properties', 'annotations'],
        properties: {
          name: STRING,
          ...presented('stereotype'),
          order: NUMBER,
          icon: ICON,
          properties: {
            type: 'object',
            description: 'How objects of this stereotype show properties, by name: only what the stereotype says, over what the type says.',
            additionalProperties: {
              type: 'object',
              additionalProperties: false,
              required: ['annotations'],
              properties: {
                label: STRING,
                labels: { type: 'object', additionalProperties: false, required: ['de', 'en'], properties: LANGUAGES },
                description: STRING,
                descriptions: { type: 'object', additionalProperties: false, properties: LANGUAGES },
                hidden: FLAG,
                readOnly: FLAG,
                mandatory: FLAG,
                default: SCALAR,
                ...FIELD,
                ...placed,
                annotations: PASSED_ON,
              },
            },
          },
        },
      },
      ResolvedLiteral: {
        type: 'object',
        additionalProperties: false,
        required: ['value', 'label', 'labels', 'descriptions', 'hidden', 'annotations'],
        properties: {
          value: STRING,
          ...presented('value'),
          order: NUMBER,
          group: { ...STRING, description: 'A heading the value is listed under in a selection (free text, not a group of fields).' },
          icon: ICON,
        },
      },
      ResolvedProperty: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'custom', 'many', 'required', 'mandatory', 'readOnly', 'writeOnly', 'limits', 'declaredBy', 'label', 'labels', 'descriptions', 'hidden', 'annotations'],
        description: 'A property of the metamodel (`custom: false`, with `dataType`) or a custom property the annotations declare (`custom: true`, with `baseType`). No value is ever in it: a write-only property (a password) is only marked so.',
        properties: {
          name: STRING,
          custom: FLAG,
          dataType: { type: 'string', enum: ['STRING', 'TEXT', 'INTEGER', 'DECIMAL', 'BOOLEAN', 'UUID', 'DATETIME', 'ENUMERATION', 'REFERENCE', 'RECORDS'] },
          baseType: {
            type: 'string',
            enum: ['STRING', 'TEXT', 'INTEGER', 'DECIMAL', 'BOOLEAN', 'DATE', 'DATETIME', 'REFERENCE', 'ID', 'ENUM'],
            description: 'STRING where the annotations name none; ID: text unique among the objects of the declaring type in the tenant; ENUM: one of `literals`.',
          },
          many: { ...FLAG, description: 'Whether it holds a list of values.' },
          range: { ...STRING, description: 'The referenced type of a REFERENCE, the enumeration of an ENUMERATION.' },
          literals: { type: 'array', items: ref('schemas', 'ResolvedLiteral'), description: "The values of an enumeration, or the annotated values of a property, with labels, in order. A custom property's literals are the only values it takes." },
          required: { ...FLAG, description: 'Whether the service requires a value.' },
          mandatory: { ...FLAG, description: 'Whether the form asks for a value: required, or made mandatory by the annotations.' },
          readOnly: { ...FLAG, description: 'Read-only in the metamodel, or shown so by the annotations.' },
          writeOnly: { ...FLAG, description: 'Written but never read back (a password).' },
          owner: { ...FLAG, description: 'Whether it names the object this one belongs to.' },
          default: { ...SCALAR, description: "The value a form starts with: the annotations' `default`, else the metamodel's." },
          ...FIELD,
          limits: LIMITS,
          declaredBy: { ...STRING, description: 'The type that declares it.' },
          when: {
            type: 'object',
            additionalProperties: false,
            required: ['property', 'literal'],
            description: 'A custom property that applies only while this property has this value.',
            properties: { property: STRING, literal: STRING },
          },
          ...presented('property'),
          ...placed,
        },
      },
      ResolvedList: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'itemType', 'itemTypes', 'inverse', 'readOnly', 'declaredBy', 'label', 'labels', 'descriptions', 'hidden', 'annotations'],
        properties: {
          name: STRING,
          itemType: STRING,
          itemTypes: { type: 'array', items: STRING, description: 'The concrete types an item may have.' },
          inverse: { ...FLAG, description: 'A view of the objects that reference this one (read only), not a list of its children.' },
          inverseOf: { ...STRING, description: 'For an inverse list: the reference property of the items.' },
          readOnly: FLAG,
          declaredBy: STRING,
          ...presented('list'),
          ...placed,
          ...FIELD,
        },
      },
    },
  },
  paths: {
    '/api/{db}/metamodel': {
      parameters: DATABASE_PARAMETERS,
      get: {
        operationId: 'getResolvedMetamodel',
        tags: ['Profiles'],
        summary: "The metamodel as the login tenant's annotations and profile present it",
        description: "Every type with its properties, lists and groups, laid over with the standard annotations and profile and the tenant's own (the tenant's win). With `scheme`, the view of one scheme: the profiles the scheme names under `profiles` over those, in order (later ones win), and for the type Scheme the annotations of the scheme's kind (its `modelType`, e.g. `DataDomainModel`) over Scheme's. Anyone signed in to the tenant. The answer carries an ETag that changes when the tenant uploads a profile (or the scheme changes); send it in `If-None-Match` to be answered 304. 400: `scheme` is not a technical key; 404: the tenant has no scheme with that key.",
        parameters: [
          queryParameter('language', 'Language of labels and descriptions; wins over `Accept-Language`. Both languages are in `labels` anyway.', { type: 'string', enum: ['de', 'en'] }),
          queryParameter('scheme', 'Technical key of a scheme of the tenant: the metamodel as its objects have it (its profiles and its kind applied).', { type: 'string', format: 'uuid' }),
          { name: 'If-None-Match', in: 'header', description: 'The ETag of an answer kept: 304 if it still applies.', schema: { type: 'string' } },
        ],
        responses: {
          200: {
            ...json('The resolved metamodel.', ref('schemas', 'ResolvedMetamodel')),
            headers: { ETag: { description: 'Tag of this answer (weak); changes with the profiles, the language and the service version.', schema: { type: 'string' } } },
          },
          304: {
            description: 'The answer tagged in `If-None-Match` still applies.',
            headers: { ETag: { description: 'Tag of the answer.', schema: { type: 'string' } } },
          },
          ...errors(400, 401, 403, 404, 429, 503),
        },
      },
    },
    '/api/{db}/profiles': {
      parameters: DATABASE_PARAMETERS,
      get: {
        operationId: 'listProfiles',
        tags: ['Profiles'],
        summary: 'The profiles the caller can see',
        description: "Anyone signed in to the tenant: the standard profiles, the tenant's own (`annotations`, `profile`, and the tenant's label as another name of `annotations`), then its named profiles by name. Another tenant's named profiles are never listed.",
        responses: {
          200: json('The profiles.', { type: 'array', items: PROFILE_INFO }),
          ...errors(401, 403, 404, 429, 503),
        },
      },
      post: {
        operationId: 'createProfile',
        tags: ['Profiles'],
        summary: 'Creates a named profile of the login tenant',
        description: "Administrators of the login tenant. The new profile holds annotations and is empty until uploaded (its download is an initial document). A name has 1 to 100 characters — letters of any language, digits, `_`, `-`, `.`, starting with a letter or digit — and is compared exactly; otherwise 400. A name that is a standard profile's, `annotations`, `profile` or the tenant's label, in any letter case, is 409, as is a name the tenant has already. Below ADMINISTRATOR: 403.",
        requestBody: jsonBody({
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: { name: { type: 'string', minLength: 1, maxLength: PROFILE_NAME_MAX, description: 'The name of the new profile.' } },
        }),
        responses: {
          201: {
            ...json('The profile was created.', PROFILE_INFO),
            headers: { Location: { description: 'Address of the new profile.', schema: { type: 'string' } } },
          },
          ...errors(400, 401, 403, 404, 409, 413, 415, 429, 503),
        },
      },
    },
    '/api/{db}/profiles/{profile}': {
      parameters: [...DATABASE_PARAMETERS, profile(ALL_NAMES)],
      get: {
        operationId: 'getProfile',
        tags: ['Profiles'],
        summary: 'What a profile is',
        description: 'Anyone signed in to the tenant. 404 for a name the tenant does not have.',
        responses: {
          200: json('The profile.', PROFILE_INFO),
          ...errors(401, 403, 404, 429, 503),
        },
      },
      delete: {
        operationId: 'deleteProfile',
        tags: ['Profiles'],
        summary: 'Deletes a named profile of the login tenant',
        description: "Administrators of the login tenant (below: 403). The standard profiles and the tenant's own (`annotations`, its label, `profile`) cannot be deleted: 403. A name the tenant does not have: 404. A profile that a scheme of the tenant names under `profiles`: 409 naming the schemes (remove it from them first).",
        responses: {
          204: { description: 'The profile was deleted.' },
          ...errors(401, 403, 404, 409, 429, 503),
        },
      },
    },
    '/api/{db}/profiles/{profile}/upload': {
      parameters: [...DATABASE_PARAMETERS, profile(Object.keys(TENANT_PROFILES))],
      put: {
        operationId: 'uploadProfile',
        tags: ['Profiles'],
        summary: "Replaces one of the login tenant's profiles",
        description: "Administrators of the login tenant. The file is checked before it is kept; a file that breaks the rules is refused with 400 naming each violation. `annotations` (or the tenant's label) and every named profile take annotations, `profile` a profile. The standard profiles cannot be uploaded (403); a name never created (or deleted) is 404.",
        requestBody: {
          required: true,
          content: {
            'multipart/form-data': {
              schema: {
                type: 'object',
                required: ['file'],
                properties: { file: { type: 'string', contentMediaType: 'application/yaml', description: 'The profile as YAML; exactly one part.' } },
              },
            },
          },
        },
        responses: {
          200: {
            description: '`true` when the profile changed, `false` when the file was the one kept already.',
            content: { 'application/json': { schema: { type: 'boolean' } } },
          },
          ...errors(400, 401, 403, 404, 413, 415, 429, 503),
        },
      },
    },
    '/api/{db}/profiles/{profile}/download': {
      parameters: [...DATABASE_PARAMETERS, profile(ALL_NAMES)],
      get: {
        operationId: 'downloadProfile',
        tags: ['Profiles'],
        summary: 'Reads a profile as YAML',
        description: "The login tenant's uploaded file (also a named profile's, and `annotations` under the tenant's label), the initial document if none was uploaded, or a standard profile generated from the metamodel. 404 for a name the tenant does not have.",
        responses: {
          200: {
            description: 'The profile.',
            headers: { 'Content-Disposition': { description: 'attachment, with the file name.', schema: { type: 'string' } } },
            content: { 'application/yaml': { schema: { type: 'string' } } },
          },
          ...errors(401, 403, 404, 429, 503),
        },
      },
    },
  },
};
