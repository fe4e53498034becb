/**
 * Access keys' and access rules' calls in the OpenAPI document
 * (runtime/openapi-fragment.ts). The request bodies are the ajv schemas the
 * handlers check them with, so the document cannot promise another shape.
 */
import { ACCESS_RULES_SCHEMA, DATABASE_PARAMETERS, errors, json, jsonBody, pathParameter, ref, type OpenApiFragment } from '../../runtime/host.ts';
import { CREATE_SCHEMA } from './keys-rest.ts';
import { EXPLAIN_SCHEMA } from './rules-rest.ts';

const KEYS = 'Access keys';
const RULES = 'Access rules';
const millis = (description: string) => ({ type: ['integer', 'null'], description });
const link = ref('schemas', 'Link');

const keyProperties = {
  id: { type: 'string', format: 'uuid', description: 'Technical key of the access key (not the key itself).' },
  userId: { type: 'string', format: 'uuid', description: 'The user the key signs in as.' },
  tenant: { type: 'string', format: 'uuid', description: 'The one tenant the key is valid in.' },
  description: { type: ['string', 'null'] },
  dateCreated: { type: 'integer', description: 'Epoch milliseconds.' },
  createdBy: { type: ['string', 'null'] },
  expiresAt: millis('Epoch milliseconds; null: never.'),
};

const userKey = pathParameter('key', "Technical key of the user, or its login ID in the caller's login tenant.");
const tenantKey = pathParameter('key', 'Technical key or label of the tenant.');

export const openapi: OpenApiFragment = {
  tags: [
    { name: KEYS, description: 'Access keys: standing credentials of a user in one tenant, managed by administrators.' },
    { name: RULES, description: "A tenant's access rules: which identities without a user of their own may sign in, and how." },
  ],
  components: {
    schemas: {
      AccessKeyInfo: {
        type: 'object',
        required: ['id', 'userId', 'tenant', 'description', 'dateCreated', 'createdBy', 'expiresAt', 'lastUsed', 'expired', '_links'],
        properties: {
          ...keyProperties,
          lastUsed: millis('When the key last signed someone in, epoch milliseconds; null: never.'),
          expired: { type: 'boolean' },
          _links: { type: 'object', required: ['self', 'user'], properties: { self: link, user: link } },
        },
      },
      AccessKeyCreated: {
        type: 'object',
        required: ['id', 'key', 'userId', 'tenant', 'description', 'dateCreated', 'createdBy', 'expiresAt'],
        properties: { ...keyProperties, key: { type: 'string', description: 'The key; shown in this answer only.' } },
      },
      AccessKeyCreate: CREATE_SCHEMA,
      AccessRules: ACCESS_RULES_SCHEMA,
      AccessRuleExplainRequest: EXPLAIN_SCHEMA,
      AccessRuleExplanation: {
        type: 'object',
        required: ['rule', 'action', 'accessLevel', 'user', 'reason', 'matched'],
        properties: {
          rule: { type: ['integer', 'null'], description: 'Position of the rule that applies.' },
          action: { type: ['string', 'null'], enum: ['GRANT', 'DENY', 'CREATE', null] },
          accessLevel: { type: ['string', 'null'], enum: ['READ_ONLY', 'EDITOR', 'ADMINISTRATOR', null] },
          user: { type: ['string', 'null'], format: 'uuid', description: 'The user the identity signs in as.' },
          reason: { type: 'string', description: '`user`, `systemAdministrator`, `rule`, or why the sign-in is refused.' },
          matched: { type: ['object', 'null'], description: 'What of the identity met each part of the applying rule\'s condition.' },
        },
      },
    },
  },
  paths: {
    '/rest/{db}/users/{key}/accessKeys': {
      parameters: [...DATABASE_PARAMETERS, userKey],
      get: {
        operationId: 'listAccessKeys',
        tags: [KEYS],
        summary: "Lists a user's access keys",
        description: "Administrators of the user's tenant and system administrators. Never shows a key or its digest.",
        responses: {
          200: json('The keys.', {
            type: 'object',
            required: ['total', '_links', '_embedded'],
            properties: {
              total: { type: 'integer', minimum: 0 },
              _links: ref('schemas', 'ListLinks'),
              _embedded: { type: 'object', required: ['accessKeys'], properties: { accessKeys: { type: 'array', items: ref('schemas', 'AccessKeyInfo') } } },
            },
          }),
          ...errors(401, 403, 404, 429, 503),
        },
      },
      post: {
        operationId: 'createAccessKey',
        tags: [KEYS],
        summary: 'Makes an access key for a user',
        description: 'The answer is the only one that holds the key. Only a system administrator may make keys for a login ID of `SERVICE_ADMIN_USER`.',
        requestBody: jsonBody(ref('schemas', 'AccessKeyCreate'), false),
        responses: {
          201: json('The key.', ref('schemas', 'AccessKeyCreated'), ['Location']),
          ...errors(400, 401, 403, 404, 413, 415, 429, 503),
        },
      },
    },
    '/rest/{db}/accessKeys/{accessKey}': {
      parameters: [...DATABASE_PARAMETERS, pathParameter('accessKey', 'Technical key of the access key.', { type: 'string', format: 'uuid' })],
      get: {
        operationId: 'getAccessKey',
        tags: [KEYS],
        summary: 'Reads an access key',
        responses: { 200: json('The key, without the key itself.', ref('schemas', 'AccessKeyInfo')), ...errors(401, 403, 404, 429, 503) },
      },
      delete: {
        operationId: 'revokeAccessKey',
        tags: [KEYS],
        summary: 'Revokes an access key',
        description: 'At once on this instance.',
        responses: { 204: { description: 'The key was revoked.' }, ...errors(401, 403, 404, 429, 503) },
      },
    },
    '/rest/{db}/tenants/{key}/accessRules': {
      parameters: [...DATABASE_PARAMETERS, tenantKey],
      get: {
        operationId: 'getAccessRules',
        tags: [RULES],
        summary: "Reads a tenant's access rules",
        description: 'Administrators of the tenant and system administrators. In order; the first rule whose condition holds decides.',
        responses: { 200: json('The rules; an empty list when there are none.', ref('schemas', 'AccessRules')), ...errors(401, 403, 404, 429, 503) },
      },
      put: {
        operationId: 'replaceAccessRules',
        tags: [RULES],
        summary: "Replaces a tenant's access rules",
        description: "A CREATE rule's `organization` names a top-level organization of the tenant.",
        requestBody: jsonBody(ref('schemas', 'AccessRules')),
        responses: { 200: json('The rules now.', ref('schemas', 'AccessRules')), ...errors(400, 401, 403, 404, 413, 415, 429, 503) },
      },
    },
    '/rest/{db}/tenants/{key}/accessRules/explain': {
      parameters: [...DATABASE_PARAMETERS, tenantKey],
      post: {
        operationId: 'explainAccessRules',
        tags: [RULES],
        summary: 'Tells what a sign-in of an identity into the tenant would get',
        description: 'Without signing in as it.',
        requestBody: jsonBody(ref('schemas', 'AccessRuleExplainRequest')),
        responses: { 200: json('The decision.', ref('schemas', 'AccessRuleExplanation')), ...errors(400, 401, 403, 404, 413, 415, 429, 503) },
      },
    },
  },
};
