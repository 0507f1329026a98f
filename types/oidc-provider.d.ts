/**
 * The part of `oidc-provider` (v9, a development dependency: the OpenID Provider the tests start) that this repository
 * uses. The package ships no types; these are written from its documentation, narrow on purpose.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface ClientLike {
    clientId: string;
    grantTypeAllowed(type: string): boolean;
    /** post a logout token of the provider's making to the client's backchannel_logout_uri */
    backchannelLogout(sub: string, sid: string): Promise<void>;
  }
  export interface SessionLike {
    accountId?: string;
    grantIdFor(clientId: string): string | undefined;
    grantIdFor(clientId: string, grantId: string): void;
  }
  export interface GrantLike {
    jti: string;
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }
  export interface GrantModel {
    new (init: { clientId: string; accountId: string }): GrantLike;
    find(id: string): Promise<GrantLike | undefined>;
  }
  export interface KoaContextLike {
    oidc: { client?: ClientLike; session?: SessionLike; provider: Provider; params?: Record<string, unknown> };
    body?: unknown;
  }
  export interface AccountLike {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }
  export interface TokenModel {
    revokeByGrantId(grantId: string): Promise<void>;
  }
  export interface Configuration {
    clients?: Array<Record<string, unknown>>;
    claims?: Record<string, string[]>;
    scopes?: string[];
    features?: Record<string, { enabled: boolean } & Record<string, unknown>>;
    pkce?: { required?: () => boolean };
    ttl?: Record<string, number>;
    conformIdTokenClaims?: boolean;
    issueRefreshToken?: (ctx: KoaContextLike, client: ClientLike) => Promise<boolean>;
    findAccount?: (ctx: KoaContextLike, sub: string) => Promise<AccountLike | undefined>;
    loadExistingGrant?: (ctx: KoaContextLike) => Promise<GrantLike | undefined>;
    cookies?: { keys?: string[] };
    fetch?: (url: URL | string, options: RequestInit & { dispatcher?: unknown }) => Promise<Response>;
    jwks?: { keys: Array<Record<string, unknown>> };
  }
  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    proxy: boolean;
    Grant: GrantModel;
    RefreshToken: TokenModel;
    AccessToken: TokenModel;
    Session: { find(id: string): Promise<unknown> };
    Client: { find(id: string): Promise<ClientLike | undefined> };
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
    registerGrantType(name: string, handler: (ctx: KoaContextLike) => Promise<void>, params?: string[]): void;
  }
  /** the OAuth errors a handler throws (their status and error code are the provider's) */
  export const errors: {
    InvalidTarget: new (description?: string) => Error;
    InvalidRequest: new (description?: string) => Error;
    InvalidGrant: new (description?: string) => Error;
  };
}
