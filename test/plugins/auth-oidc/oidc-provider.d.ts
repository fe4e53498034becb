/** The little of oidc-provider's API the tests use (the package ships no types). */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface OidcContext {
    oidc: {
      params: Record<string, string | undefined>;
      client: { clientId: string };
    };
    body: unknown;
  }

  interface Token {
    accountId?: string;
    clientId?: string;
    kind: string;
    expiration: number;
    save(): Promise<string>;
  }

  interface Grant {
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    readonly issuer: string;
    AccessToken: new (fields: Record<string, unknown>) => Token;
    ResourceServer: new (identifier: string, data: Record<string, unknown>) => object;
    Grant: {
      new (fields: { clientId: string; accountId: string }): Grant;
      find(id: string): Promise<Grant | undefined>;
    };
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{
      uid: string; prompt: { name: string; details: Record<string, unknown> }; params: Record<string, unknown>;
      grantId?: string; session?: { accountId: string };
    }>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
    registerGrantType(name: string, handler: (ctx: OidcContext) => Promise<void>, params?: string[]): void;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  const errors: {
    InvalidGrant: new (description?: string) => Error;
    InvalidTarget: new (description?: string) => Error;
  };

  export default Provider;
  export { errors, Provider };
}
