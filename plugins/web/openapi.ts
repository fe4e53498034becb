/**
 * The user interface's calls in the OpenAPI document (runtime/openapi-fragment.ts):
 * the pages and their assets, and the sessions the pages sign in with.
 */
import { errors, json, jsonBody, pathParameter, queryParameter, ref, type OpenApiFragment } from '../../runtime/host.ts';

const TAG = 'User interface';

const database = queryParameter('database', 'The database the session is for; absent: the service-wide calls (`/api/admin/…`, system administrators only).', {
  type: 'string', pattern: '^[a-z][a-z0-9_]{0,62}$',
});
const csrfToken = {
  name: 'X-CSRF-Token', in: 'header', required: true, schema: { type: 'string', minLength: 1 },
  description: 'The session\'s anti-forgery token, as sign-in answered it.',
};
const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });
const redirect = (description: string) => ({
  description, headers: { Location: { description: 'Where the browser goes next.', schema: { type: 'string' } } },
});

const sessionBody = {
  type: 'object',
  additionalProperties: false,
  required: ['loginId', 'accessLevel', 'systemAdmin', 'method'],
  properties: {
    csrfToken: { type: 'string', description: 'The anti-forgery token: every call of the pages sends it as `X-CSRF-Token`. Absent under pre-authentication, which has no session.' },
    loginId: { type: 'string' },
    tenant: { type: 'string', format: 'uuid', description: 'Technical key of the login tenant.' },
    tenantLabel: { type: 'string', description: 'Label of the login tenant.' },
    accessLevel: { type: 'string', enum: ['READ_ONLY', 'EDITOR', 'ADMINISTRATOR'] },
    systemAdmin: { type: 'boolean' },
    systemAdministrators: { type: 'array', items: { type: 'string' }, description: 'The login IDs of the system administrators (`SERVICE_ADMIN_USER`); only for administrators of the database, in a database\'s session.' },
    method: { type: 'string', description: 'The sign-in method, e.g. `basic`, `directory`, `oidc`.' },
    logoutUrl: { type: 'string', description: 'Where Logout leads (`SERVICE_LOGOUT_URL`).' },
  },
};

const COOKIE = 'The session is the cookie sign-in set (HttpOnly, SameSite=Strict); calls that change it also need the token as `X-CSRF-Token`.';

export const openapi: OpenApiFragment = {
  tags: [{ name: TAG, description: 'The pages of the service and the sessions they sign in with. A session\'s cookie is accepted on `/rest/{db}`, `/api/{db}` and `/api/admin` only together with its anti-forgery token in `X-CSRF-Token`, and only for its own database.' }],
  components: {
    schemas: {
      WebSession: sessionBody,
      WebSignIn: {
        type: 'object',
        additionalProperties: false,
        required: ['loginId', 'password'],
        properties: {
          database: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,62}$', description: 'The database to sign in to; absent: the service-wide calls.' },
          loginId: { type: 'string', maxLength: 1024 },
          password: { type: 'string', maxLength: 1024, format: 'password' },
          tenant: { type: 'string', maxLength: 1024, description: 'The login tenant to sign in to, as `service-tenant` names it.' },
        },
      },
    },
  },
  paths: {
    '/web': {
      get: {
        operationId: 'getWebPage', tags: [TAG], security: [],
        summary: 'The pages of the service',
        description: 'The HTML shell of the pages; the script it loads shows the page the address names.',
        responses: { 200: html('The page.'), ...errors(503) },
      },
    },
    '/web/{page}': {
      parameters: [pathParameter('page', 'A page of the user interface, e.g. a database (`db_1`) or an object (`db_1/schemes/<uuid>`); may span several segments.')],
      get: {
        operationId: 'getWebSubPage', tags: [TAG], security: [],
        summary: 'A page of the service',
        description: 'The same HTML shell for every address below `/web/` (other than the calls listed here).',
        responses: { 200: html('The page.'), ...errors(503) },
      },
    },
    '/web/assets/{name}': {
      parameters: [pathParameter('name', 'The file name, with the hash of its content.')],
      get: {
        operationId: 'getWebAsset', tags: [TAG], security: [],
        summary: 'A script or style sheet of the pages',
        description: 'Cached for good (its name changes with its content); compressed with br or gzip as `Accept-Encoding` allows.',
        responses: {
          200: {
            description: 'The file.',
            content: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } } },
          },
          ...errors(404, 503),
        },
      },
    },
    '/web/session': {
      parameters: [ref('parameters', 'AcceptLanguage')],
      get: {
        operationId: 'getWebSession', tags: [TAG], security: [],
        summary: 'Tells the pages who is signed in',
        description: `${COOKIE} Under pre-authentication the proxy's headers sign the request in, and the answer has no token.`,
        parameters: [database],
        responses: { 200: json('The person signed in.', ref('schemas', 'WebSession')), ...errors(400, 401, 403, 503) },
      },
      post: {
        operationId: 'createWebSession', tags: [TAG], security: [],
        summary: 'Signs in to the pages with login ID and password',
        description: 'Checked by the same sign-in methods and throttling as Basic authentication of the programming interfaces; an access key is never accepted. '
          + 'Answers the session with `Set-Cookie`. Only with password or directory sign-in (403 otherwise). One message for every wrong part.',
        requestBody: jsonBody(ref('schemas', 'WebSignIn')),
        responses: {
          200: json('Signed in.', ref('schemas', 'WebSession')),
          ...errors(400, 401, 403, 404, 413, 415, 429, 503),
        },
      },
      patch: {
        operationId: 'switchWebSessionTenant', tags: [TAG], security: [],
        summary: 'Switches the login tenant of the session',
        description: `${COOKIE} The login-tenant rules decide, as for \`service-tenant\`; a refused tenant leaves the session where it was.`,
        parameters: [database, csrfToken],
        requestBody: jsonBody({
          type: 'object', additionalProperties: false, required: ['tenant'],
          properties: { tenant: { type: 'string', maxLength: 1024, description: 'Label of the tenant.' } },
        }),
        responses: { 200: json('The session in the new tenant.', ref('schemas', 'WebSession')), ...errors(400, 401, 403, 413, 415, 503) },
      },
      delete: {
        operationId: 'deleteWebSession', tags: [TAG], security: [],
        summary: 'Signs out of the pages',
        description: `${COOKIE} Ends the session on every instance of the service and clears the cookie.`,
        parameters: [database, csrfToken],
        responses: {
          200: json('Signed out.', {
            type: 'object', additionalProperties: false,
            properties: { logoutUrl: { type: 'string', description: 'Where the browser goes next (`SERVICE_LOGOUT_URL`), when set.' } },
          }),
          ...errors(400, 401, 503),
        },
      },
    },
    '/web/login': {
      get: {
        operationId: 'startWebSignIn', tags: [TAG], security: [],
        summary: 'Signs in to the pages with OpenID Connect',
        description: 'Sends the browser to the identity provider (Authorization Code flow with PKCE, state and nonce). Only with OpenID Connect sign-in (404 otherwise).',
        parameters: [
          database,
          queryParameter('return', 'Where the browser goes once signed in: a path below `/web/` of the service.', { type: 'string' }),
        ],
        responses: { 302: redirect('To the provider, or back to the page with `signInError` when the provider cannot be reached.'), ...errors(400, 404, 503) },
      },
    },
    '/web/auth': {
      get: {
        operationId: 'finishWebSignIn', tags: [TAG], security: [],
        summary: 'Where the identity provider sends the browser back',
        description: 'Exchanges the code, verifies the token as a bearer token of the programming interfaces, opens the session (`Set-Cookie`) and sends the browser to the return path; '
          + 'a failure sends it to the page of the database with `signInError=<error code>`. Each sign-in is answered once.',
        parameters: [
          queryParameter('code', 'The authorization code.', { type: 'string' }),
          queryParameter('state', 'The state of the sign-in.', { type: 'string' }),
        ],
        responses: { 302: redirect('To the return path, or to the page with `signInError`.'), ...errors(404, 503) },
      },
    },
  },
};
