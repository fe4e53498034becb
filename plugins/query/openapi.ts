/** The query interface's calls in the OpenAPI document (runtime/openapi-fragment.ts); routes.ts answers them. */
import { DATABASE_PARAMETERS, errors, json, jsonBody, pathParameter, queryParameter, ref, type OpenApiFragment } from '../../runtime/host.ts';
import { FORMATS, MEDIA_TYPES } from './formats.ts';
import { MAX_TIMEOUT_MS } from './routes.ts';

const TAG = 'Queries';
const TIMEOUT = { type: ['integer', 'null'], minimum: 0, maximum: MAX_TIMEOUT_MS };

const runParameters = [
  queryParameter('format', 'Format of the result; case does not matter.', { type: 'string', enum: FORMATS, default: 'CSV' }),
  queryParameter('language', 'Language of texts in the result (boolean words, messages); wins over `Accept-Language`.', { type: 'string', enum: ['de', 'en'] }),
  queryParameter('version', 'Runs the statement on the state as of this time, in epoch milliseconds; wins over `Accept-Version`.', { type: 'integer', minimum: 0 }),
  queryParameter('statementTimeout', 'Longest run in milliseconds; may lower the configured maximum. Only system administrators may raise it or send 0 (none).', { type: 'integer', minimum: 0, maximum: MAX_TIMEOUT_MS }),
  ref('parameters', 'AcceptVersion'),
];

const job = pathParameter('job', 'Technical key of the job, as its start answered.', { type: 'string', format: 'uuid' });
const entries = { type: 'array', items: ref('schemas', 'QueryJobEntry') };

export const openapi: OpenApiFragment = {
  tags: [{ name: TAG, description: 'Read-only SQL statements over the generated views of a database; administrators only.' }],
  components: {
    schemas: {
      QueryStatement: {
        type: 'object',
        additionalProperties: false,
        required: ['sql'],
        properties: { sql: { type: 'string', description: 'One SELECT over the views of the database (`scheme_view`, `attribute_view`, …).' } },
      },
      QueryFailure: {
        type: 'object',
        required: ['message'],
        description: 'A statement that the sandbox or the database refused, or a job without a result: the message, and for a statement the position of the error where the parser or the database gives one.',
        properties: {
          message: { type: 'string', description: 'The sandbox\'s or the database\'s text, as it words it.' },
          position: {
            type: 'integer',
            minimum: 1,
            description: 'Where in the statement of the request the error lies: a 1-based offset in characters (Unicode code points, as PostgreSQL counts them) into the `sql` sent. '
              + 'Present when the sandbox\'s parser or check, or the database, places the error within that text (a syntax error, an unknown column, a refused function or view); '
              + 'absent otherwise. A statement that ends too early has its position one past its last character.',
          },
        },
      },
      QueryViews: {
        type: 'object',
        required: ['views'],
        description: 'The views a statement may read, by name, each with its columns in order.',
        properties: {
          views: {
            type: 'array',
            items: {
              type: 'object',
              required: ['name', 'columns'],
              properties: {
                name: { type: 'string' },
                columns: {
                  type: 'array',
                  items: { type: 'object', required: ['name', 'type'], properties: { name: { type: 'string' }, type: { type: 'string', description: 'The PostgreSQL data type.' } } },
                },
              },
            },
          },
        },
      },
      QueryJobEntry: {
        type: 'object',
        required: ['level', 'message'],
        properties: { level: { type: 'string' }, message: { type: 'string' } },
      },
      QueryJobList: {
        type: 'object',
        description: 'Jobs as HAL JSON, newest first.',
        required: ['total', '_links', '_embedded'],
        properties: {
          total: { type: 'integer', minimum: 0, description: 'Number of jobs the caller sees with these parameters.' },
          _links: ref('schemas', 'ListLinks'),
          _embedded: { type: 'object', required: ['jobs'], properties: { jobs: { type: 'array', items: ref('schemas', 'QueryJobSummary') } } },
        },
      },
      QueryJobSummary: {
        type: 'object',
        required: ['id', 'kind', 'status', 'format', 'statement', 'createdBy', 'created', 'started', 'finished', 'elapsedMs', '_links'],
        properties: {
          id: { type: 'string', format: 'uuid', description: 'Technical key of the job.' },
          kind: { type: 'string', description: 'What the job does: `query`, or `upload` (a metadata upload, decisions §8).' },
          status: { type: 'string', enum: ['QUEUED', 'RUNNING', 'COMPLETED', 'FAILED'] },
          format: { type: 'string', description: `Format of the result (a query's: ${FORMATS.join(', ')}; an upload's change report: JSON).` },
          statement: { type: ['string', 'null'], description: 'The start of the statement (200 characters, white space collapsed), or what an upload does (`MERGE Finance.json`); null for jobs started before the list existed.' },
          createdBy: { type: 'string', description: 'Login ID of the caller who started the job.' },
          created: { type: 'integer', minimum: 0, description: 'When the job was started, in epoch milliseconds.' },
          started: { type: ['integer', 'null'], minimum: 0, description: 'When its statement began to run; null while queued.' },
          finished: { type: ['integer', 'null'], minimum: 0, description: 'When it completed or failed; null until then.' },
          elapsedMs: { type: ['integer', 'null'], minimum: 0, description: 'Milliseconds from start to finish (to now while running); null while queued.' },
          _links: {
            type: 'object',
            required: ['statistics', 'logs', 'download'],
            properties: { statistics: ref('schemas', 'Link'), logs: ref('schemas', 'Link'), download: ref('schemas', 'Link') },
          },
        },
      },
      QuerySettings: {
        type: 'object',
        required: ['statementTimeout', 'serverStatementTimeout'],
        properties: {
          statementTimeout: { ...TIMEOUT, description: "The database's maximum run time in ms; null: the server's applies." },
          serverStatementTimeout: { type: 'integer', minimum: 0, description: 'SERVICE_STATEMENT_TIMEOUT.' },
        },
      },
    },
  },
  paths: {
    '/api/{db}/queries/download': {
      parameters: DATABASE_PARAMETERS,
      put: {
        operationId: 'runQuery',
        tags: [TAG],
        summary: 'Runs a statement and answers its result',
        description: 'Administrators of the login tenant (their tenant only) and system administrators (every tenant). The result streams as it is read.',
        parameters: runParameters,
        requestBody: jsonBody(ref('schemas', 'QueryStatement')),
        responses: {
          200: {
            description: 'The result in the requested format.',
            content: Object.fromEntries(FORMATS.map((f) => [MEDIA_TYPES[f].split(';')[0], { schema: f === 'JSON' ? { type: 'array', items: { type: 'object' } } : { type: 'string' } }])),
          },
          400: {
            description: 'A bad parameter or body (error format), or a statement the sandbox or the database refused (`message`, and `position` where one is known).',
            content: { 'application/json': { schema: { anyOf: [ref('schemas', 'Error'), ref('schemas', 'QueryFailure')] } } },
          },
          ...errors(401, 403, 404, 413, 415, 429, 503),
        },
      },
      post: {
        operationId: 'startQueryJob',
        tags: [TAG],
        summary: 'Starts a job that runs a statement',
        description: 'As the synchronous call, but answers at once with the job; its state, logs and result are read below `/jobs/{job}`.',
        parameters: runParameters,
        requestBody: jsonBody(ref('schemas', 'QueryStatement')),
        responses: {
          200: json('The job was queued.', { type: 'object', required: ['id'], properties: { id: { type: 'string', format: 'uuid' } } }),
          ...errors(400, 401, 403, 404, 413, 415, 429, 503),
        },
      },
    },
    '/api/{db}/jobs': {
      parameters: DATABASE_PARAMETERS,
      get: {
        operationId: 'listJobs',
        tags: [TAG],
        summary: 'Lists jobs, newest first',
        description: 'With `mine=true`, the caller\'s own jobs of this database (started under the caller\'s login ID in the login tenant). '
          + 'Without it, system administrators see every job of the database; administrators every job of their login tenant '
          + 'except those a system administrator started over all tenants; everyone else only their own. '
          + 'Another tenant\'s jobs are never listed; finished jobs are kept for SERVICE_JOB_RETENTION.',
        parameters: [
          queryParameter('mine', 'Only the caller\'s own jobs.', { type: 'boolean', default: false }),
          ref('parameters', 'Limit'),
          ref('parameters', 'Cursor'),
        ],
        responses: { 200: json('The jobs.', ref('schemas', 'QueryJobList')), ...errors(400, 401, 404, 429, 503) },
      },
    },
    '/api/{db}/jobs/{job}/statistics': {
      parameters: [...DATABASE_PARAMETERS, job],
      get: {
        operationId: 'getQueryJobStatistics',
        tags: [TAG],
        summary: "Reads a job's state",
        responses: Object.fromEntries([
          ...[[200, 'The job has finished (COMPLETED or FAILED).'], [202, 'The job is queued or running.']].map(([status, description]) => [status, json(description as string, {
            type: 'object',
            required: ['status', 'messages'],
            properties: {
              status: { type: 'string', enum: ['QUEUED', 'RUNNING', 'COMPLETED', 'FAILED'] },
              messages: entries,
              progress: {
                type: 'object',
                required: ['rows', 'bytes', 'elapsedMs'],
                description: 'While running and once completed.',
                properties: { rows: { type: 'integer', minimum: 0 }, bytes: { type: 'integer', minimum: 0 }, elapsedMs: { type: 'integer', minimum: 0 } },
              },
              kind: { type: 'string', description: 'A job of another kind than `query` (an upload): its kind.' },
              statistics: {
                type: 'object',
                description: 'An upload\'s figures, while it runs and once it finished: objects read, created, updated, deleted, unchanged, failed, and total once the file is read.',
                additionalProperties: { type: 'integer', minimum: 0 },
              },
            },
          })]),
          ...Object.entries(errors(401, 403, 404, 429, 503)),
        ]),
      },
    },
    '/api/{db}/jobs/{job}/logs': {
      parameters: [...DATABASE_PARAMETERS, job],
      get: {
        operationId: 'getQueryJobLogs',
        tags: [TAG],
        summary: "Reads a job's log",
        responses: {
          200: json('The log, oldest first.', { type: 'object', required: ['totalCount', 'data'], properties: { totalCount: { type: 'integer', minimum: 0 }, data: entries } }),
          ...errors(401, 403, 404, 429, 503),
        },
      },
    },
    '/api/{db}/jobs/{job}/download': {
      parameters: [...DATABASE_PARAMETERS, job],
      get: {
        operationId: 'downloadQueryJobResult',
        tags: [TAG],
        summary: "Reads a completed job's result",
        responses: {
          200: {
            description: "The result in the format the job was started with; an upload's change report (JSON: created, updated with the properties changed, deleted, by business key).",
            content: Object.fromEntries(FORMATS.map((f) => [MEDIA_TYPES[f].split(';')[0], {
              schema: f === 'JSON' ? { oneOf: [{ type: 'array', items: { type: 'object' } }, {
                type: 'object', required: ['created', 'updated', 'deleted'],
                description: "An upload's change report: what it created, updated (with the properties) and deleted, by business key; for a dry run, what it would have done.",
                properties: {
                  dryRun: { type: 'boolean' },
                  created: { type: 'array', items: { type: 'string' } },
                  updated: { type: 'array', items: { type: 'object', required: ['key', 'properties'], properties: { key: { type: 'string' }, properties: { type: 'array', items: { type: 'string' } } } } },
                  deleted: { type: 'array', items: { type: 'string' } },
                },
              }] } : { type: 'string' },
            }])),
          },
          ...errors(401, 403, 404),
          409: json('The job has not completed, or it failed.', ref('schemas', 'QueryFailure')),
          ...errors(429, 503),
        },
      },
    },
    '/api/{db}/queries/views': {
      parameters: DATABASE_PARAMETERS,
      get: {
        operationId: 'listQueryViews',
        tags: [TAG],
        summary: 'Lists the views a statement may read, with their columns',
        description: 'Administrators; what the query console completes and lists beside its editor.',
        responses: { 200: json('The views, by name.', ref('schemas', 'QueryViews')), ...errors(401, 403, 404, 429, 503) },
      },
    },
    '/api/{db}/queries/settings': {
      parameters: DATABASE_PARAMETERS,
      get: {
        operationId: 'getQuerySettings',
        tags: [TAG],
        summary: "Reads the database's statement timeout",
        description: 'Administrators.',
        responses: { 200: json('The settings.', ref('schemas', 'QuerySettings')), ...errors(401, 403, 404, 429, 503) },
      },
      put: {
        operationId: 'setQuerySettings',
        tags: [TAG],
        summary: "Sets the database's statement timeout",
        description: 'System administrators only.',
        requestBody: jsonBody({
          type: 'object', additionalProperties: false, required: ['statementTimeout'],
          properties: { statementTimeout: { ...TIMEOUT, description: 'Milliseconds; 0: none; null: the server\'s applies.' } },
        }),
        responses: { 200: json('The settings now.', ref('schemas', 'QuerySettings')), ...errors(400, 401, 403, 404, 413, 415, 429, 503) },
      },
    },
  },
};
