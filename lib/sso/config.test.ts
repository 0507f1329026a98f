/**
 * config/sso.yaml: what a valid file gives, every mistake refused at its file:line:column, the client secret taken
 * from a named environment variable (never from the file, never shown), roles from groups with the highest winning,
 * and the file as part of an application: hot reload with the last good version kept.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '@/lib/app';
import { ConfigFileError } from '@/lib/permissions/yaml-config';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { parseSsoConfig, roleFromGroups, ssoConfigJson } from './config';

const VALID = `base_url: https://swarm.example.com/
session_lifetime: 8h
local_login: break_glass
break_glass_user: admin
providers:
  - id: corp
    name: Corporate sign-in
    issuer: https://login.example.com/realms/corp
    client_id: swarm-console
    client_secret_env: SSO_CORP_SECRET
    groups_claim: roles
    roles:
      admin: [swarm-admins]
      operator: [swarm-operators, sre]
      auditor: [risk-audit]
`;

function refused(text: string, env: Record<string, string> = {}): string {
  try {
    parseSsoConfig(text, 'config/sso.yaml', env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigFileError);
    return (error as Error).message;
  }
  throw new Error('the file was accepted');
}

describe('parseSsoConfig', () => {
  it('reads providers, their secret from the named variable, the callback under base_url, and the local login rule', () => {
    const c = parseSsoConfig(VALID, 'config/sso.yaml', { SSO_CORP_SECRET: 's3cret-value' });
    expect(c.localLogin).toBe('break_glass');
    expect(c.breakGlassUser).toBe('admin');
    expect(c.sessionLifetimeSeconds).toBe(8 * 3600);
    const [corp] = c.providers;
    expect(corp!.clientSecret).toBe('s3cret-value');
    expect(corp!.scopes).toEqual(['openid', 'profile', 'email', 'offline_access']);
    expect(corp!.usernameClaim).toBe('preferred_username');
    expect(corp!.groupsClaim).toBe('roles');
    expect(corp!.redirectUri).toBe('https://swarm.example.com/api/v1/auth/sso/corp/callback');
    expect(corp!.position).toBe('config/sso.yaml:6:5');
    // what /transparency shows: the variable's name, never its value
    const shown = JSON.stringify(ssoConfigJson(c));
    expect(shown).toContain('SSO_CORP_SECRET');
    expect(shown).not.toContain('s3cret-value');
  });

  it('defaults: no file content is passwords for everyone and no provider', () => {
    const c = parseSsoConfig('');
    expect(c.localLogin).toBe('password');
    expect(c.providers).toEqual([]);
  });

  it('the highest role any group maps to wins; no mapped group is no role', () => {
    const corp = parseSsoConfig(VALID, 'x', { SSO_CORP_SECRET: 's' }).providers[0]!;
    expect(roleFromGroups(corp, ['risk-audit', 'sre'])).toBe('operator');
    expect(roleFromGroups(corp, ['risk-audit'])).toBe('auditor');
    expect(roleFromGroups(corp, ['swarm-admins', 'risk-audit'])).toBe('admin');
    expect(roleFromGroups(corp, ['marketing'])).toBeNull();
    expect(roleFromGroups(corp, [])).toBeNull();
  });

  it('refuses each mistake at its line and column', () => {
    expect(refused(VALID)).toMatch(/config\/sso.yaml:10:\d+.*SSO_CORP_SECRET is not set/s);
    expect(refused(VALID.replace('local_login: break_glass\nbreak_glass_user: admin\n', 'local_login: break_glass\n'), { SSO_CORP_SECRET: 's' })).toMatch(/config\/sso.yaml:3:\d+.*break_glass_user/s);
    expect(refused(VALID.replace('base_url: https://swarm.example.com/\n', ''), { SSO_CORP_SECRET: 's' })).toMatch(/base_url/);
    expect(refused(VALID.replace('id: corp', 'id: Corp!'), { SSO_CORP_SECRET: 's' })).toMatch(/config\/sso.yaml:6:\d+.*lower-case/s);
    expect(refused(VALID.replace('issuer: https://login.example.com/realms/corp', 'issuer: login.example.com'), { SSO_CORP_SECRET: 's' })).toMatch(/config\/sso.yaml:8:\d+.*issuer/s);
    expect(refused(VALID.replace('local_login: break_glass', 'local_login: never'), { SSO_CORP_SECRET: 's' })).toMatch(/password or break_glass/);
    expect(refused(VALID.replace('    groups_claim: roles\n', '    group_claim: roles\n'), { SSO_CORP_SECRET: 's' })).toMatch(/config\/sso.yaml:11:\d+/);
    const noRoles = VALID.replace(/    roles:\n[\s\S]*$/, '    roles: {}\n');
    expect(refused(noRoles, { SSO_CORP_SECRET: 's' })).toMatch(/at least one group/);
    expect(refused(`${VALID}  - id: corp\n    name: Again\n    issuer: https://b.example.com\n    client_id: b\n    roles: { viewer: [all] }\n`, { SSO_CORP_SECRET: 's' })).toMatch(/duplicate provider id "corp"/);
  });

  it('agent_tokens: the resource (from base_url unless given), each issuer with its scopes and client → agent map; mistakes at their line', () => {
    const TOKENS = `agent_tokens:
  issuers:
    - issuer: https://login.example.com/realms/corp
      scopes: [swarm-agent]
      agents: { claude-desktop: desk, crm-batch: crm }
`;
    const c = parseSsoConfig(`${VALID}${TOKENS}`, 'config/sso.yaml', { SSO_CORP_SECRET: 's' });
    expect(c.agentTokens!.resource).toBe('https://swarm.example.com/mcp');
    const [corp] = c.agentTokens!.issuers;
    expect(corp).toMatchObject({ issuer: 'https://login.example.com/realms/corp', scopes: ['swarm-agent'], personClaim: 'sub', tokenType: 'at+jwt', clientClaim: null, jwksUri: null });
    expect(corp!.agents.get('crm-batch')).toBe('crm');
    expect(corp!.position).toBe('config/sso.yaml:18:7');
    expect(parseSsoConfig(`agent_tokens:
  resource: https://gw.example.com/mcp/
  issuers:
    - { issuer: https://idp.example.com, agents: { a: b } }
`).agentTokens!.resource).toBe('https://gw.example.com/mcp');
    expect(parseSsoConfig('').agentTokens).toBeNull();
    // without base_url there is nothing to make the resource from
    expect(refused(`agent_tokens:
  issuers:
    - { issuer: https://idp.example.com, agents: { a: b } }
`)).toMatch(/config\/sso.yaml:2:\d+.*needs resource/s);
    expect(refused(`${VALID}${TOKENS.replace('https://login.example.com/realms/corp', 'login.example.com')}`, { SSO_CORP_SECRET: 's' })).toMatch(/config\/sso.yaml:18:\d+.*issuer/s);
    expect(refused(`${VALID}${TOKENS.replace('crm-batch: crm', 'crm-batch: "no agent!"')}`, { SSO_CORP_SECRET: 's' })).toMatch(/config\/sso.yaml:20:\d+.*agent name/s);
    expect(refused(`${VALID}${TOKENS.replace('      scopes', '      token_type: jwt\n      scopes')}`, { SSO_CORP_SECRET: 's' })).toMatch(/config\/sso.yaml:19:\d+.*at\+jwt/s);
    expect(refused(`${VALID}agent_tokens:\n  issuers: []\n`, { SSO_CORP_SECRET: 's' })).toMatch(/at least one issuer/);
    expect(refused(`${VALID}${TOKENS}    - { issuer: https://login.example.com/realms/corp, agents: {} }\n`, { SSO_CORP_SECRET: 's' })).toMatch(/config\/sso.yaml:21:\d+.*listed twice/s);
  });

  it('a page may read the file without the secret (the value is left empty)', () => {
    const c = parseSsoConfig(VALID, 'config/sso.yaml', {}, { secrets: 'optional' });
    expect(c.providers[0]!.clientSecret).toBe('');
  });
});

describe('config/sso.yaml in an application', () => {
  let t: TempApp | undefined;
  afterEach(() => t?.cleanup());

  it('is reloaded when it changes; a broken version keeps the last good one in force, with the error at its line', () => {
    t = tempApp();
    expect(t.app.ssoFile.current.providers).toEqual([]);
    const path = join(t.dir, 'sso.yaml');
    writeFileSync(path, VALID.replace('    client_secret_env: SSO_CORP_SECRET\n', ''));
    expect(t.app.ssoFile.reload(), String(t.app.ssoFile.status().error)).toBe(true);
    expect(t.app.ssoFile.current.providers.map((p) => p.id)).toEqual(['corp']);
    writeFileSync(path, `${VALID.replace('    client_secret_env: SSO_CORP_SECRET\n', '')}\nlocal_login: sometimes\n`);
    expect(t.app.ssoFile.reload()).toBe(false);
    expect(t.app.ssoFile.current.localLogin).toBe('break_glass');
    expect(t.app.ssoFile.status().error).toMatch(/sso.yaml/);
  });
});

describe('a compliance profile that turns passwords off (identity.local_login: break_glass)', () => {
  let dir: string | undefined;
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  it('makes passwords break-glass only whatever config/sso.yaml says, and none at all without a break_glass_user', () => {
    dir = mkdtempSync(join(tmpdir(), 'swarm-sso-profile-'));
    writeFileSync(join(dir, 'agents.yaml'), 'agents: {}\n');
    writeFileSync(join(dir, 'permission_policies.yaml'), 'rules: []\n');
    mkdirSync(join(dir, 'profiles', 'glass'), { recursive: true });
    writeFileSync(
      join(dir, 'profiles', 'glass', 'profile.yaml'),
      'title: Break-glass only (tests)\ndescription: Passwords only for the break-glass administrator.\nframeworks: [PCI DSS v4.0 8.2.2]\nidentity:\n  local_login: break_glass\n  basis: the tests of break-glass\n',
    );
    const app = createApp({ dbPath: join(dir, 'test.db'), configDir: dir, env: {}, profile: 'glass' });
    try {
      expect(app.profiles.breakGlassOnly?.profiles).toEqual(['glass']);
      expect(app.sso.localLogin).toBe('break_glass');
      // closed, never open: without a break_glass_user in config/sso.yaml no password works
      expect(app.sso.passwordAllowed('admin')).toBe(false);
      writeFileSync(join(dir, 'sso.yaml'), 'break_glass_user: admin\n');
      expect(app.ssoFile.reload(), String(app.ssoFile.status().error)).toBe(true);
      expect(app.sso.passwordAllowed('admin')).toBe(true);
      expect(app.sso.passwordAllowed('olivia')).toBe(false);
    } finally {
      app.close();
    }
  });
});
