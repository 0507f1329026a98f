/**
 * The access-token check on its own, against an issuer served by the test over HTTP (its metadata and its key set,
 * which the test changes): discovery, key rotation followed, metadata naming another issuer refused, how the client
 * and the person are read from what each provider puts in its tokens (RFC 9068, Keycloak, Entra ID, Okta), and that a
 * refusal is recorded.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '@/lib/permissions';
import { parseSsoConfig } from '@/lib/sso/config';
import { AgentTokens, looksLikeJwt } from './agent-tokens';

type Key = { kid: string; privateKey: CryptoKey; jwk: JWK };
const newKey = async (kid: string): Promise<Key> => {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256' } };
};

let server: Server;
let issuer = '';
let published: Key[] = [];
let metadataIssuer: () => string = () => issuer;
let keyFetches = 0;
const recorded: AuditEvent[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/realms/corp/.well-known/openid-configuration') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: metadataIssuer(), jwks_uri: `${issuer}/keys` }));
    } else if (req.url === '/realms/corp/keys') {
      keyFetches++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published.map((k) => k.jwk) }));
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/realms/corp`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const RESOURCE = 'https://swarm.example.com/mcp';
function tokens(extra = '') {
  const config = parseSsoConfig(
    `agent_tokens:
  resource: ${RESOURCE}
  issuers:
    - issuer: ${issuer}
      scopes: [swarm-agent]
      agents: { claude-desktop: desk, crm-batch: crm, ghost-client: ghost }
${extra}`,
    'sso.yaml',
  );
  return new AgentTokens({ ssoFile: { current: config }, hasAgent: (n) => n === 'desk' || n === 'crm', recorder: { record: async (e: AuditEvent) => void recorded.push(e) } }, { keyCooldownMs: 0 });
}

const now = () => Math.floor(Date.now() / 1000);
const sign = (key: Key, claims: JWTPayload, typ = 'at+jwt') =>
  new SignJWT({ iss: issuer, aud: RESOURCE, scope: 'swarm-agent', exp: now() + 300, iat: now(), ...claims }).setProtectedHeader({ alg: 'ES256', kid: key.kid, typ }).sign(key.privateKey);

describe('AgentTokens', () => {
  it('tells a JWT from our own tokens', () => {
    expect(looksLikeJwt('eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln')).toBe(true);
    expect(looksLikeJwt('swarm_pat_0123456789abcdef')).toBe(false);
    expect(looksLikeJwt('eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.')).toBe(true);
  });

  it('finds the keys through the issuer\'s metadata and follows their rotation', async () => {
    const first = await newKey('k1');
    const second = await newKey('k2');
    published = [first];
    const t = tokens();
    expect(await t.verify(await sign(first, { client_id: 'crm-batch', sub: 'crm-batch' }))).toMatchObject({ ok: true, client: 'crm-batch', person: null, principal: { kind: 'agent', id: 'crm', agent: 'crm', role: 'viewer', scopes: ['decide'] } });
    // The provider rotates: a new key is published, the old one withdrawn.
    published = [second];
    const fetchesBefore = keyFetches;
    expect(await t.verify(await sign(second, { client_id: 'crm-batch', sub: 'crm-batch' }))).toMatchObject({ ok: true });
    expect(keyFetches).toBeGreaterThan(fetchesBefore);
    expect(await t.verify(await sign(first, { client_id: 'crm-batch', sub: 'crm-batch' }))).toMatchObject({ ok: false, reason: expect.stringMatching(/key its issuer does not publish/) });
  });

  it('refuses metadata that names another issuer (RFC 8414 §3.3)', async () => {
    published = [await newKey('k3')];
    metadataIssuer = () => 'https://evil.example';
    try {
      const outcome = await tokens().verify(await sign(published[0]!, { client_id: 'crm-batch' }));
      expect(outcome).toMatchObject({ ok: false, reason: expect.stringMatching(/keys of .* could not be had .*names the issuer "https:\/\/evil.example"/) });
    } finally {
      metadataIssuer = () => issuer;
    }
  });

  it('reads the client and the person as each provider writes them', async () => {
    const key = await newKey('k4');
    published = [key];
    const t = tokens();
    const check = async (claims: JWTPayload) => {
      const o = await t.verify(await sign(key, claims));
      return o.ok ? { client: o.client, person: o.person } : o.reason;
    };
    // RFC 9068 / Okta: a client's own token has the client as subject
    expect(await check({ client_id: 'crm-batch', sub: 'crm-batch' })).toEqual({ client: 'crm-batch', person: null });
    // a person's sign-in through the client
    expect(await check({ client_id: 'claude-desktop', sub: 'alice' })).toEqual({ client: 'claude-desktop', person: 'alice' });
    // Keycloak: azp names the client; a service account is no person
    expect(await check({ azp: 'crm-batch', sub: '5e0c…uuid', preferred_username: 'service-account-crm-batch' })).toEqual({ client: 'crm-batch', person: null });
    // Entra ID: appid (v1) names the client, idtyp app marks an application's own token; scp as a string
    expect(await check({ appid: 'crm-batch', sub: 'oid-of-app', idtyp: 'app', scope: undefined, scp: 'swarm-agent other' })).toEqual({ client: 'crm-batch', person: null });
    // Okta: cid names the client, scp is an array
    expect(await check({ cid: 'claude-desktop', sub: 'bob@corp.example', scope: undefined, scp: ['swarm-agent'] })).toEqual({ client: 'claude-desktop', person: 'bob@corp.example' });
    // token exchange (RFC 8693): the subject is the person, act the agent, even when the provider put a service name in
    expect(await check({ client_id: 'crm-batch', sub: 'carol', act: { sub: 'crm-batch' }, preferred_username: 'service-account-x' })).toEqual({ client: 'crm-batch', person: 'carol' });
    // a client mapped to an agent config/agents.yaml does not have
    expect(await check({ client_id: 'ghost-client', sub: 'ghost-client' })).toMatch(/mapped to the agent "ghost", which config\/agents.yaml does not have/);
    // no client named at all
    expect(await check({ sub: 'alice' })).toMatch(/names no client/);
  });

  it('a configured claim names the client and the person', async () => {
    const key = await newKey('k5');
    published = [key];
    const t = tokens('      client_claim: app\n      person_claim: email\n'.replace(/^/gm, ''));
    const o = await t.verify(await sign(key, { app: 'claude-desktop', client_id: 'crm-batch', sub: 'u-1', email: 'dana@corp.example' }));
    expect(o).toMatchObject({ ok: true, client: 'claude-desktop', person: 'dana@corp.example', principal: { id: 'desk', onBehalfOf: 'dana@corp.example' } });
  });

  it('takes typ JWT only when the issuer says token_type: any', async () => {
    const key = await newKey('k6');
    published = [key];
    const token = await sign(key, { client_id: 'crm-batch', sub: 'crm-batch' }, 'JWT');
    expect(await tokens().verify(token)).toMatchObject({ ok: false, reason: expect.stringMatching(/not an access token/) });
    expect(await tokens('      token_type: any\n').verify(token)).toMatchObject({ ok: true });
  });

  it('records a refusal with the reason, the issuer and the client', async () => {
    const key = await newKey('k7');
    published = [key];
    const before = recorded.length;
    let said = '';
    const principal = await tokens().principal(await sign(key, { client_id: 'crm-batch', aud: 'https://other.example' }), '10.0.0.7', (why) => (said = why));
    expect(principal).toBeUndefined();
    expect(said).toMatch(/not for this resource/);
    expect(recorded.slice(before)).toEqual([
      expect.objectContaining({ type: 'auth.token.refused', actor: 'client:crm-batch', outcome: 'refused', ip: '10.0.0.7', detail: { reason: said, issuer, client: 'crm-batch' } }),
    ]);
  });
});
