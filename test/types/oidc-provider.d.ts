/** The little of oidc-provider (which ships no types) the OpenID Connect test uses. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  interface InteractionContext {
    oidc: {
      provider: { Grant: new (init: { clientId: string; accountId: string }) => Grant };
      client?: { clientId: string };
      session?: { accountId?: string };
    };
  }
  interface Account {
    accountId: string;
    claims: () => Record<string, unknown>;
  }
  export interface Configuration {
    clients: Record<string, unknown>[];
    claims?: Record<string, string[]>;
    conformIdTokenClaims?: boolean;
    features?: Record<string, unknown>;
    pkce?: { required: () => boolean };
    findAccount: (ctx: InteractionContext, sub: string) => Account | Promise<Account>;
    loadExistingGrant?: (ctx: InteractionContext) => Promise<Grant | undefined>;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
