/** The profile interface's calls in the OpenAPI document (runtime/openapi-fragment.ts). */
import { DATABASE_PARAMETERS, errors, pathParameter, type OpenApiFragment } from '../../runtime/host.ts';
import { STANDARD_FILES, TENANT_PROFILES } from './catalog.ts';

const STANDARD = Object.keys(STANDARD_FILES);
const profile = (names: string[]) => pathParameter('profile', 'Name of the profile.', { type: 'string', enum: names });

export const openapi: OpenApiFragment = {
  tags: [{ name: 'Profiles', description: "The login tenant's annotations (custom properties) and profile (what the user interface shows), as YAML files." }],
  paths: {
    '/api/{db}/profiles/{profile}/upload': {
      parameters: [...DATABASE_PARAMETERS, profile(Object.keys(TENANT_PROFILES))],
      put: {
        operationId: 'uploadProfile',
        tags: ['Profiles'],
        summary: "Replaces one of the login tenant's profiles",
        description: 'Administrators of the login tenant. The file is checked before it is kept; a file that breaks the rules is refused with 400 naming each violation. The standard profiles cannot be uploaded (403).',
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
      parameters: [...DATABASE_PARAMETERS, profile([...Object.keys(TENANT_PROFILES), ...STANDARD])],
      get: {
        operationId: 'downloadProfile',
        tags: ['Profiles'],
        summary: 'Reads a profile as YAML',
        description: "The login tenant's uploaded file, the initial document if none was uploaded, or a standard profile generated from the metamodel.",
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
