/** The user interface's calls in the OpenAPI document (runtime/openapi-fragment.ts). */
import { errors, json, jsonBody, queryParameter, ref, type OpenApiFragment } from '../../runtime/host.ts';
export const openapi: OpenApiFragment = { paths: {} };
