/**
 * The JWT a trusted authentication module injects next to the proxy's
 * headers (SERVICE_REMOTE_USER_OIDC_JWT). Per the specification its
 * signature is NOT verified (nor its expiry: the module that issued and
 * injected it answers for that); it only supplies user information the
 * headers left empty, and never the login ID.
 */
import { decodeJwt, type JWTPayload } from 'jose';
import { ClaimError, claimContains, claimOf, claimReader } from '../../runtime/host.ts';
import { MAX_VALUE_LENGTH } from './headers.ts';

export { ClaimError, claimContains, claimOf };

/**
 * Claims are held to what the proxy's headers are: no control characters
 * (C1 included), at most MAX_VALUE_LENGTH, and lists of texts only, as a
 * header's list is.
 */
export const { textClaim, listClaim } = claimReader({ maxLength: MAX_VALUE_LENGTH, control: /[\u0000-\u001f\u007f-\u009f]/, numbersInLists: false });

/** Decodes without verifying; throws for anything that is not a JWT with a JSON object as payload. */
export function decodeInjectedJwt(token: string): JWTPayload {
  return decodeJwt(token);
}
