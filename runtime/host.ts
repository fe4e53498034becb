/**
 * The public host module: everything a plugin may use of the service, and
 * nothing else. Built-in plugins import it by path (`../../runtime/host.ts`),
 * plugins from outside the repository by the package's export
 * (`metadata-service/host`); none reaches into other files of `runtime/`
 * (test/plugins/imports.spec.ts holds the built-in ones to that).
 *
 * HOST_API_VERSION is what a manifest's `host` range is checked against at
 * start. Its major version changes when something exported here changes in
 * a way a plugin written for the previous one could notice (a name removed,
 * a signature narrowed, a meaning changed); additions raise the minor one.
 */

export { HOST_API_VERSION } from './host-version.ts';

// Plugins: the manifest, the host handed to `register`, and what they extend.
export type { AuthenticateOptions, PluginHost, ObjectLink, PluginManifest, PluginResources, RestExtension, SecretHandler, SignInMethod, MethodExclusion, WriteObserver } from './plugins.ts';
export { AUTH_PHASES, type AuthPhase } from './plugins.ts';
export { ConfigError, booleanSetting } from './config.ts';

// Authentication: the driver interface and what the core offers drivers.
export type { SignIn } from './auth/middleware.ts';
export type { AccessLevel, AuthDriver, AuthRequest, AuthResult, DatabaseInfo, Directory, ExternalIdentity, LoginTenant, Principal, UserRecord } from './auth/types.ts';
export { ACCESS_LEVELS } from './auth/types.ts';
export { atLeast, requireLevel } from './auth/middleware.ts';
// Pieces every sign-in method shares: the Basic header, failed-attempt throttling, remembered sign-ins, JWT claims.
export { parseBasic } from './auth/basic-header.ts';
export { clientAddress, SignInThrottle, type Attempt } from './auth/throttle.ts';
export { CredentialCache, type CredentialCacheOptions } from './auth/credential-cache.ts';
export { ClaimError, claimContains, claimOf, claimReader, type ClaimLimits, type ClaimReader } from './auth/claims.ts';
// Access rules (the access plugin manages them; the core applies them).
export { ACCESS_RULES_SCHEMA, accessRulesEnabled, accessRuleViolations, AccessRuleStore, decideAccess, type AccessRule } from './auth/access-rules.ts';

// Where Logout leads (SERVICE_LOGOUT_URL) and the user interface's address of a database.
export { databaseUiUrl, logoutUrl, PLACEHOLDER } from './logout-url.ts';

// Errors in the specification's format, and messages in every language the service speaks.
export { createError, languageOf, languageParameter, ServiceError, type ErrorCode, type Violation } from './errors.ts';
export { translate, type Language } from './messages.ts';

// Request bodies and their checks.
export { bodyError, decodedBody, hasBody, type DecodedBody, type JsonBodyReader } from './body.ts';
// Uploads of one file (multipart/form-data) and the Content-Disposition of files (1.5).
export { boundaryOf, readSingleFile, type UploadedFile, type UploadRules } from './multipart.ts';
export { attachment, cleanFilename, parseDisposition } from './disposition.ts';
export { oversized, violationsOf, wrongTypeKey } from './validation.ts';
export { UUID } from './rest/paths.ts';
export { epochMillis } from './versions.ts';
export type { CustomPropertiesCheck, StatusCheck } from './rest/writer.ts';

// The plugin's part of the OpenAPI document (plugins/<name>/openapi.ts), in the document's own terms.
export { DATABASE_PARAMETERS, errors, json, jsonBody, pathParameter, queryParameter, ref, type OpenApiFragment } from './openapi-fragment.ts';

// Storage: schemas, stored objects, views, the connections.
export { CONTROL_SCHEMA, DATABASE_NAME, schemaOf } from './storage/migrations.ts';
export { literal } from './storage/sql.ts';
// ObjectStore.childrenOfMany and withAncestors, for walks over whole trees (1.7); leaner reads of them (1.9).
export { ObjectStore, type LeanTreeObject, type LeanTreeRead, type StoredObject } from './storage/objects.ts';
export { isObjectOf, storedPropertyName, type ObjectOf } from './storage/typed-objects.ts';
export { readViewsSql } from './storage/views.ts';
export type { Storage } from './storage/connection.ts';
export type { Databases } from './storage/databases.ts';
export type { SnapshotReaders } from './storage/pglite/readers.ts';

// The metamodel as the runtime reads it.
export { WRITABLE_SYSTEM_PROPERTIES, type Metamodel, type PropertyDef, type TypeDef } from './metamodel/model.ts';
// Which lists each type has, for ObjectStore.linkFacts (1.5).
export { listPlanOf, type ListPlan } from './metamodel/relations.ts';

// Writes of many objects in one transaction (uploads), and jobs of every kind in one address space.
export type { ObjectWriteRequest, ObjectWrites, PreparedWrite } from './rest/object-writes.ts';
// Bulk writes that do not hold the database while they are prepared (1.6).
export type { BulkWrites, CheckedWrites } from './rest/bulk-writes.ts';
export type { JobLogEntry, JobOutcome, JobReporter, JobService, JobSubmission } from './jobs.ts';

// Operations: figures and the interactive gate.
export type { Metrics } from './metrics.ts';
export type { InteractiveGate } from './interactive.ts';
export { turnsEvery } from './interactive.ts';
