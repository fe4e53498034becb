/** The session plugin's call in the OpenAPI document (runtime/openapi-fragment.ts). */
import { DATABASE_PARAMETERS, errors, json, type OpenApiFragment } from '../../runtime/host.ts';

export const openapi: OpenApiFragment = {
  tags: [{ name: 'Session', description: 'Who the caller is signed in as.' }],
  paths: {
    '/api/{db}/session': {
      parameters: DATABASE_PARAMETERS,
      get: {
        operationId: 'getSession',
        tags: ['Session'],
        summary: 'Tells who the caller is signed in as',
        description: 'By whichever sign-in method is on; `logoutUrl` is where Logout leads, present only when `SERVICE_LOGOUT_URL` is set. Holds nothing secret.',
        responses: {
          200: json('The caller.', {
            type: 'object',
            additionalProperties: false,
            required: ['loginId', 'accessLevel', 'systemAdmin', 'method'],
            properties: {
              loginId: { type: 'string' },
              tenant: { type: 'string', format: 'uuid', description: 'Technical key of the login tenant.' },
              tenantLabel: { type: 'string', description: 'Label of the login tenant.' },
              accessLevel: { type: 'string', enum: ['READ_ONLY', 'EDITOR', 'ADMINISTRATOR'] },
              systemAdmin: { type: 'boolean' },
              method: { type: 'string', description: 'The sign-in method, e.g. `basic`, `directory`, `accessKey`.' },
              logoutUrl: { type: 'string', description: 'Where Logout leads.' },
            },
          }),
          ...errors(401, 403, 404, 429, 503),
        },
      },
    },
  },
};
