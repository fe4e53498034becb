/**
 * The version of the public host module's contract (runtime/host.ts), in a
 * module of its own so that the loader reads it without loading everything
 * the host module re-exports. Major: a change a plugin written for the
 * previous version could notice; minor: additions.
 */
export const HOST_API_VERSION = '1.9.0';
