/**
 * config/sso.yaml: single sign-on for people through OpenID Connect providers, and whether passwords still work.
 *
 *   base_url: https://swarm.example.com      # where people reach the console; the callback is under it
 *   session_lifetime: 8h                     # a signed-in session ends after this, whatever the provider says
 *   local_login: break_glass                 # password (default): everyone may; break_glass: only break_glass_user
 *   break_glass_user: admin
 *   providers:
 *     - id: corp                             # in the callback address: <base_url>/api/v1/auth/sso/corp/callback
 *       name: Corporate sign-in              # on the button: "Sign in with Corporate sign-in"
 *       issuer: https://login.example.com/realms/corp
 *       client_id: swarm-console
 *       client_secret_env: SWARM_SSO_CORP_SECRET   # the variable that holds the secret (never the secret itself)
 *       scopes: [openid, profile, email, offline_access]
 *       groups_claim: groups                 # the ID token claim (or userinfo's) listing the person's groups
 *       username_claim: preferred_username
 *       roles:                               # the provider's groups that give each role; the highest wins
 *         admin: [swarm-admins]
 *         operator: [swarm-operators]
 *         auditor: [risk-audit]
 *         viewer: [everyone]
 *   agent_tokens:                            # agents signed in by the company's provider: OAuth access tokens (RFC 9068)
 *     resource: https://swarm.example.com/mcp  # the audience a token must carry (default <base_url>/mcp; RFC 8707)
 *     issuers:
 *       - issuer: https://login.example.com/realms/corp   # its keys come from its metadata (or jwks_uri)
 *         scopes: [swarm-agent]              # every one of these must be granted
 *         agents:                            # the token's client → the agent of config/agents.yaml it is
 *           claude-desktop: desk
 *           crm-batch: crm
 *
 * Pure: text in, a frozen configuration (or ConfigFileError with file:line:column) out.
 */
import { z } from 'zod';
import { durationSchema } from '@/lib/permissions/gates';
import { ConfigFileError, idList, parseYamlConfigLocated, type ConfigIssue } from '@/lib/permissions/yaml-config';
import type { UserRole } from '@/lib/auth/store';

/** Highest first: the order in which a person's groups are matched. */
export const SSO_ROLES = ['admin', 'operator', 'auditor', 'viewer'] as const satisfies readonly UserRole[];

const PROVIDER_ID = /^[a-z][a-z0-9-]{0,39}$/;
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'the name of an environment variable (letters, digits, "_")');
const claimName = z.string().regex(/^[A-Za-z0-9_.:/-]{1,100}$/, 'a claim name');
const groupList = z.array(z.string().min(1).max(200)).default([]);

const providerSchema = z.strictObject({
  id: z.string().regex(PROVIDER_ID, 'id is lower-case letters, digits and "-", starting with a letter (at most 40)'),
  name: z.string().trim().min(1).max(60),
  issuer: z.url({ protocol: /^https?$/, error: 'issuer is the provider\'s https URL (its discovery document is under it)' }),
  client_id: z.string().min(1).max(200),
  client_secret_env: envName.optional(),
  scopes: z.array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'a scope')).default(['openid', 'profile', 'email', 'offline_access']),
  groups_claim: claimName.default('groups'),
  username_claim: claimName.default('preferred_username'),
  roles: z
    .strictObject({ admin: groupList, operator: groupList, auditor: groupList, viewer: groupList })
    .partial()
    .default({}),
});

const issuerSchema = z.strictObject({
  issuer: z.url({ protocol: /^https?$/, error: 'issuer is the authorization server\'s URL, exactly as its tokens name it (iss)' }),
  jwks_uri: z.url({ protocol: /^https?$/, error: 'jwks_uri is the https URL of its published keys' }).optional(),
  scopes: z.array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'a scope')).default([]),
  client_claim: claimName.optional(),
  person_claim: claimName.default('sub'),
  token_type: z.enum(['at+jwt', 'any'], { error: 'token_type is at+jwt (RFC 9068, the default) or any (a provider whose access tokens say typ JWT, as Entra ID\'s do)' }).default('at+jwt'),
  agents: z.record(z.string().min(1).max(200), z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'an agent name of config/agents.yaml')),
});

const agentTokensSchema = z.strictObject({
  resource: z.url({ protocol: /^https?$/, error: 'resource is the /mcp address agents are given (the audience of their tokens)' }).optional(),
  issuers: z.array(issuerSchema).min(1, 'agent_tokens needs at least one issuer'),
});

const fileSchema = z
  .strictObject({
    version: z.literal(1).default(1),
    agent_tokens: agentTokensSchema.optional(),
    base_url: z.url({ protocol: /^https?$/, error: 'base_url is the console\'s own http(s) address' }).optional(),
    session_lifetime: durationSchema.refine((s) => s >= 60 && s <= 30 * 86400, 'between 1m and 30d').default(12 * 3600),
    local_login: z.enum(['password', 'break_glass'], { error: 'local_login is password or break_glass' }).default('password'),
    break_glass_user: z.string().regex(/^[a-zA-Z0-9_.@-]{1,64}$/, 'a user name').optional(),
    providers: idList(providerSchema, 'provider'),
  })
  .superRefine((f, ctx) => {
    if (f.local_login === 'break_glass' && f.break_glass_user === undefined) {
      ctx.addIssue({ code: 'custom', path: ['local_login'], message: 'local_login: break_glass needs break_glass_user: the one administrator who may still sign in with a password' });
    }
    if (f.agent_tokens && f.agent_tokens.resource === undefined && f.base_url === undefined) {
      ctx.addIssue({ code: 'custom', path: ['agent_tokens'], message: 'needs resource (the /mcp address agents are given), or base_url to make it from' });
    }
    const seen = new Set<string>();
    (f.agent_tokens?.issuers ?? []).forEach((i, n) => {
      if (seen.has(i.issuer)) ctx.addIssue({ code: 'custom', path: ['agent_tokens', 'issuers', n, 'issuer'], message: `the issuer ${i.issuer} is listed twice` });
      seen.add(i.issuer);
    });
    const providers = f.providers ?? [];
    if (providers.length > 0 && f.base_url === undefined) {
      ctx.addIssue({ code: 'custom', path: ['providers'], message: 'providers need base_url: the console\'s own address, which the callback address starts with' });
    }
    providers.forEach((p, i) => {
      if (!p.scopes.includes('openid')) ctx.addIssue({ code: 'custom', path: ['providers', i, 'scopes'], message: 'scopes must include openid' });
      if (SSO_ROLES.every((r) => (p.roles[r] ?? []).length === 0)) {
        ctx.addIssue({ code: 'custom', path: ['providers', i, 'roles'], message: 'roles maps at least one group to a role (admin, operator, auditor, viewer): without one nobody could sign in' });
      }
    });
  });

/** A provider as the console uses it (parseSsoConfig). */
export type SsoProvider = SsoConfig['providers'][number];
export type SsoConfig = ReturnType<typeof parseSsoConfig>;

export type AgentTokenIssuer = NonNullable<SsoConfig['agentTokens']>['issuers'][number];

export const NO_SSO: SsoConfig = Object.freeze({ baseUrl: null, sessionLifetimeSeconds: 12 * 3600, localLogin: 'password', breakGlassUser: null, providers: Object.freeze([]) as readonly SsoProvider[], agentTokens: null });

/**
 * Parse config/sso.yaml. `secrets: 'optional'` is for a process that only shows the file (a page, a command): a secret
 * variable that is not set is left empty; a server refuses the file instead, pointing at the line naming the variable.
 */
export function parseSsoConfig(
  text: string,
  file = 'sso.yaml',
  env: Readonly<Record<string, string | undefined>> = {},
  options: { secrets?: 'required' | 'optional' } = {},
) {
  const { data, at } = parseYamlConfigLocated(text, file, fileSchema);
  const issues: ConfigIssue[] = [];
  const base = (data.base_url ?? '').replace(/\/+$/, '');
  const providers = (data.providers ?? []).map((p, i) => {
    const pos = at(['providers', i]);
    const clientSecret = p.client_secret_env === undefined ? '' : (env[p.client_secret_env] ?? '');
    if (p.client_secret_env !== undefined && clientSecret === '' && options.secrets !== 'optional') {
      issues.push({ ...at(['providers', i, 'client_secret_env']), path: `providers.${i}.client_secret_env`, message: `the environment variable ${p.client_secret_env} is not set` });
    }
    const roles = Object.freeze(Object.fromEntries(SSO_ROLES.map((r) => [r, Object.freeze([...(p.roles[r] ?? [])])]))) as Readonly<Record<UserRole, readonly string[]>>;
    return Object.freeze({
      id: p.id,
      name: p.name,
      issuer: p.issuer,
      clientId: p.client_id,
      /** the variable the secret is read from (shown), and its value (never shown; '' for a public client) */
      clientSecretEnv: p.client_secret_env ?? null,
      clientSecret,
      scopes: Object.freeze([...p.scopes]),
      groupsClaim: p.groups_claim,
      usernameClaim: p.username_claim,
      /** per role, the groups that give it */
      roles,
      /** <base_url>/api/v1/auth/sso/<id>/callback: what the provider must have as a redirect URI */
      redirectUri: `${base}/api/v1/auth/sso/${p.id}/callback`,
      /** <base_url>/api/v1/auth/sso/<id>/backchannel-logout */
      backchannelLogoutUri: `${base}/api/v1/auth/sso/${p.id}/backchannel-logout`,
      /** where it is declared, file:line:column */
      position: `${file}:${pos.line}:${pos.column}`,
    });
  });
  if (issues.length > 0) throw new ConfigFileError(file, issues);
  const tokens = data.agent_tokens;
  const agentTokens = tokens
    ? Object.freeze({
        /** the audience every token must carry: this server's /mcp (RFC 8707 resource indicator) */
        resource: (tokens.resource ?? `${base}/mcp`).replace(/\/+$/, ''),
        issuers: Object.freeze(
          tokens.issuers.map((i, n) => {
            const pos = at(['agent_tokens', 'issuers', n]);
            return Object.freeze({
              issuer: i.issuer,
              jwksUri: i.jwks_uri ?? null,
              scopes: Object.freeze([...i.scopes]),
              /** the claim naming the token's client; null: client_id (RFC 9068), else azp, appid or cid */
              clientClaim: i.client_claim ?? null,
              personClaim: i.person_claim,
              tokenType: i.token_type,
              /** client id → agent name */
              agents: Object.freeze(new Map(Object.entries(i.agents))),
              position: `${file}:${pos.line}:${pos.column}`,
            });
          }),
        ),
      })
    : null;
  return Object.freeze({
    agentTokens,
    baseUrl: data.base_url === undefined ? null : base,
    sessionLifetimeSeconds: data.session_lifetime,
    localLogin: data.local_login,
    breakGlassUser: data.break_glass_user ?? null,
    providers: Object.freeze(providers),
  });
}

/** The role a person's groups give under a provider: the highest role any of them maps to, or null for none. */
export function roleFromGroups(provider: SsoProvider, groups: readonly string[]): UserRole | null {
  const held = new Set(groups);
  for (const role of SSO_ROLES) if (provider.roles[role].some((g) => held.has(g))) return role;
  return null;
}

/** What /transparency shows of the file: no secret, only the variable that holds it. */
export function ssoConfigJson(c: SsoConfig) {
  return {
    local_login: c.localLogin,
    break_glass_user: c.breakGlassUser,
    session_lifetime_seconds: c.sessionLifetimeSeconds,
    providers: c.providers.map((p) => ({
      id: p.id,
      name: p.name,
      issuer: p.issuer,
      client_id: p.clientId,
      client_secret_env: p.clientSecretEnv,
      scopes: [...p.scopes],
      groups_claim: p.groupsClaim,
      username_claim: p.usernameClaim,
      roles: Object.fromEntries(SSO_ROLES.map((r) => [r, [...p.roles[r]]])),
      redirect_uri: p.redirectUri,
      position: p.position,
    })),
    agent_tokens: c.agentTokens
      ? {
          resource: c.agentTokens.resource,
          issuers: c.agentTokens.issuers.map((i) => ({
            issuer: i.issuer,
            scopes: [...i.scopes],
            client_claim: i.clientClaim,
            person_claim: i.personClaim,
            token_type: i.tokenType,
            agents: Object.fromEntries(i.agents),
            position: i.position,
          })),
        }
      : null,
  };
}
