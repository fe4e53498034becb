/** The upload and download calls in the OpenAPI document (runtime/openapi-fragment.ts). */
import { DATABASE_PARAMETERS, errors, json, pathParameter, queryParameter, type OpenApiFragment } from '../../runtime/host.ts';
import { formatNames } from './formats/index.ts';

const TAG = 'Upload and download';
const FORMAT = { type: 'string', enum: formatNames(), description: 'File format (any case).' };
const FILE_TYPES: Record<string, string> = { JSON: 'application/json', YAML: 'application/yaml' };

const downloadParameters = [
  queryParameter('format', 'File format; JSON when absent. A format the service does not have is 400 naming the allowed ones.', FORMAT),
  queryParameter('assetTypes', 'Comma-separated type names: only objects of these types (and their subtypes), with the objects that hold them.', { type: 'string' }),
  queryParameter('version', 'A past state: the model as it was at this time (epoch milliseconds).', { type: 'string' }),
  queryParameter('language', 'Language of texts a format writes for people; wins over `Accept-Language`.', { type: 'string', enum: ['de', 'en'] }),
];

const downloaded = (what: string) => ({
  200: {
    description: `${what}, streamed as it is read: the root object with \`_type\` and its properties, each of its lists an array of nested objects of the same shape, depth first. References name their targets by business key (labels joined by \`/\`, a label holding \`/\` in double quotes; another model's objects with a leading \`/\` and its label). Custom properties included; secrets never.`,
    headers: { 'Content-Disposition': { description: 'attachment, with a file name saying what it is (`Finance.json`; RFC 5987 for names beyond ASCII).', schema: { type: 'string' } } },
    content: Object.fromEntries(Object.values(FILE_TYPES).map((t) => [t, { schema: t === 'application/json' ? { type: 'object' } : { type: 'string' } }])),
  },
});

const uploadParameters = [
  queryParameter('operation', 'ADD only creates (an object the file names that exists is an error); MERGE (default) creates and updates and keeps the rest; REPLACE also deletes what the file does not name below the target.', { type: 'string', enum: ['ADD', 'MERGE', 'REPLACE'] }),
  queryParameter('dryRun', 'true: check everything and report the planned changes, write nothing.', { type: 'boolean' }),
  queryParameter('format', "The file's format; else the file name's extension says it.", FORMAT),
  queryParameter('language', 'Language of the job\'s messages and logs.', { type: 'string', enum: ['de', 'en'] }),
];

const uploadBody = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', description: 'The file; exactly one part. At most the body limit (SERVICE_BODY_LIMIT).' } } },
    },
  },
};

const started = {
  202: {
    ...json('The upload runs as a job: follow `Location` (its statistics), then read its logs and change report.', {
      type: 'object',
      required: ['id', '_links'],
      properties: {
        id: { type: 'string', format: 'uuid', description: 'Technical key of the job.' },
        _links: { type: 'object', required: ['statistics', 'logs', 'download'], properties: { statistics: { type: 'object' }, logs: { type: 'object' }, download: { type: 'object' } } },
      },
    }),
    headers: { Location: { description: "The job's statistics.", schema: { type: 'string' } } },
  },
};

export const openapi: OpenApiFragment = {
  tags: [{ name: TAG, description: 'Whole models in and out as files, by business key (decisions §8); uploads run as jobs (`/api/{db}/jobs/{job}/…`).' }],
  paths: {
    '/api/{db}/schemes/{label}/download': {
      parameters: [...DATABASE_PARAMETERS, pathParameter('label', 'Label or technical key of the scheme.')],
      get: {
        operationId: 'downloadScheme', tags: [TAG], summary: 'Downloads a scheme and everything below it',
        description: 'Anyone who may read the model.',
        parameters: downloadParameters,
        responses: { ...downloaded('The scheme'), ...errors(400, 401, 403, 404, 429, 503) },
      },
    },
    '/api/{db}/collections/{id}/download': {
      parameters: [...DATABASE_PARAMETERS, pathParameter('id', 'Technical key of the collection.', { type: 'string', format: 'uuid' })],
      get: {
        operationId: 'downloadCollection', tags: [TAG], summary: 'Downloads a collection and everything below it',
        description: 'Anyone who may read the model. Objects outside the collection are named by business key from their model\'s root (`/Finance/…`).',
        parameters: downloadParameters,
        responses: { ...downloaded('The collection'), ...errors(400, 401, 403, 404, 429, 503) },
      },
    },
    '/api/{db}/tenants/{label}/download': {
      parameters: [...DATABASE_PARAMETERS, pathParameter('label', 'Label or technical key of the tenant.')],
      get: {
        operationId: 'downloadTenant', tags: [TAG], summary: 'Downloads a tenant and its users',
        description: "The tenant's administrators (signed in to it) and system administrators. Passwords and key hashes are never written.",
        parameters: downloadParameters,
        responses: { ...downloaded('The tenant with its users (list `users`)'), ...errors(400, 401, 403, 404, 429, 503) },
      },
    },
    '/api/{db}/schemes/{label}/upload': {
      parameters: [...DATABASE_PARAMETERS, pathParameter('label', 'Label or technical key of the scheme; an upload into a label that does not exist creates the scheme (a technical key must name one).')],
      put: {
        operationId: 'uploadScheme', tags: [TAG], summary: 'Uploads a file into a scheme, as a job',
        description: 'Editors and above; REPLACE of a whole scheme: administrators. The job applies the file in one transaction: any refused object fails it and nothing is written. Its logs name each refused object by business key with its line and column.',
        parameters: uploadParameters,
        requestBody: uploadBody,
        responses: { ...started, ...errors(400, 401, 403, 404, 413, 415, 429, 503) },
      },
    },
    '/api/{db}/collections/{id}/upload': {
      parameters: [...DATABASE_PARAMETERS, pathParameter('id', 'Technical key of the collection.', { type: 'string', format: 'uuid' })],
      put: {
        operationId: 'uploadCollection', tags: [TAG], summary: 'Uploads a file into a collection, as a job',
        description: 'Editors and above. The file starts with the collection itself.',
        parameters: uploadParameters,
        requestBody: uploadBody,
        responses: { ...started, ...errors(400, 401, 403, 404, 413, 415, 429, 503) },
      },
    },
  },
};
