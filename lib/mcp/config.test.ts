/**
 * config/mcp.yaml: what a valid file gives, every mistake refused at its file:line:column, secrets taken from named
 * environment variables (never from the file), and the file as part of an application: hot reload with the last good
 * version kept, and part of the policy revision.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigFileError } from '@/lib/permissions/yaml-config';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { allowedCommandsOnDisk } from './allowed-commands';
import { askModeOf, parseMcpConfig } from './config';

const VALID = `separator: "__"
approval_wait: 5m
call_timeout: 30s
servers:
  - id: files
    command: npx
    args: [-y, "@modelcontextprotocol/server-filesystem", /srv/shared]
    env: { GITHUB_TOKEN: TOKEN_FOR_FILES }
    on_ask: return
    tools: { write_file: { on_ask: wait } }
  - id: crm
    url: https://mcp.example.com/mcp?tenant=7
    headers: { Authorization: CRM_AUTH }
    call_timeout: 2m
`;

function refused(text: string, env: Record<string, string> = {}, options: { secrets?: 'required' | 'optional' } = {}): string {
  try {
    parseMcpConfig(text, 'config/mcp.yaml', env, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigFileError);
    return (error as Error).message;
  }
  throw new Error('the file was accepted');
}

describe('parseMcpConfig', () => {
  it('reads servers of both transports, their secrets from the named variables, and how an ASK is answered', () => {
    const c = parseMcpConfig(VALID, 'config/mcp.yaml', { TOKEN_FOR_FILES: 'ghp_x', CRM_AUTH: 'Bearer abc' });
    expect(c.separator).toBe('__');
    expect(c.approvalWaitMs).toBe(300_000);
    const [files, crm] = c.servers;
    expect(files!.transport).toEqual({ kind: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv/shared'], env: { GITHUB_TOKEN: 'ghp_x' } });
    expect(files!.callTimeoutMs).toBe(30_000);
    expect(askModeOf(files!, 'write_file')).toBe('wait');
    expect(askModeOf(files!, 'read_file')).toBe('return');
    expect(files!.position).toBe('config/mcp.yaml:5:5');
    expect(crm!.transport).toEqual({ kind: 'http', url: 'https://mcp.example.com/mcp?tenant=7', headers: { Authorization: 'Bearer abc' } });
    // what /transparency shows: no query, variable names only
    expect(crm!.shown).toBe('https://mcp.example.com/mcp');
    expect(crm!.envFrom).toEqual({ Authorization: 'CRM_AUTH' });
    expect(crm!.callTimeoutMs).toBe(120_000);
    expect(askModeOf(crm!, 'anything')).toBe('wait');
  });

  it('defaults: no file content is no server; an ASK waits ten minutes; calls time out after a minute', () => {
    const c = parseMcpConfig('servers:\n  - id: a\n    command: run-a\n');
    expect(c.approvalWaitMs).toBe(600_000);
    expect(c.servers[0]!.callTimeoutMs).toBe(60_000);
    expect(c.servers[0]!.onAsk).toBe('wait');
    expect(parseMcpConfig('').servers).toEqual([]);
  });

  it.each([
    ['a server with neither a command nor a url', 'servers:\n  - id: a\n', 'config/mcp.yaml:2:5: servers.0: a server has either a command (stdio) or a url'],
    ['a server with both', 'servers:\n  - id: a\n    command: x\n    url: https://x/mcp\n', 'servers.0: a server has either a command'],
    ['a bad id', 'servers:\n  - id: Files_1\n    command: x\n', 'config/mcp.yaml:2:9: servers.0.id: id is lower-case letters'],
    ['an id holding the separator', 'separator: "-"\nservers:\n  - id: my-files\n    command: x\n', 'config/mcp.yaml:3:9: servers.0.id: the id contains the separator "-"'],
    ['two servers with one id', 'servers:\n  - id: a\n    command: x\n  - id: a\n    command: y\n', 'config/mcp.yaml:4:9: servers.1.id: duplicate server id "a"'],
    ['a url that is not http(s)', 'servers:\n  - id: a\n    url: ftp://x/mcp\n', 'config/mcp.yaml:3:10: servers.0.url: url is an http(s) URL'],
    ['an unknown key', 'servers:\n  - id: a\n    command: x\n    timeout: 5\n', 'config/mcp.yaml:4:5: servers.0: Unrecognized key: "timeout"'],
    ['a bad on_ask', 'servers:\n  - id: a\n    command: x\n    on_ask: later\n', 'config/mcp.yaml:4:13: servers.0.on_ask: on_ask is wait or return'],
    ['a secret written in the file', 'servers:\n  - id: a\n    command: x\n    env: { TOKEN: "ghp 123" }\n', 'servers.0.env.TOKEN: the name of an environment variable'],
    ['headers on a command', 'servers:\n  - id: a\n    command: x\n    headers: { Authorization: AUTH }\n', 'servers.0.headers: headers are for a url server'],
    ['a bad duration', 'approval_wait: soon\n', 'config/mcp.yaml:1:16: approval_wait: "soon" is not a duration'],
    ['malformed YAML', 'servers: [\n', 'config/mcp.yaml:2:1'],
  ])('refuses %s at its line and column', (_, text, message) => {
    expect(refused(text)).toContain(message);
  });

  it('refuses a variable that is not set where the upstreams are connected, and leaves it empty where the file is only read', () => {
    const text = 'servers:\n  - id: crm\n    url: https://x/mcp\n    headers: { Authorization: CRM_AUTH }\n';
    expect(refused(text, {}, { secrets: 'required' })).toBe('config/mcp.yaml:4:31: servers.0.headers.Authorization: the environment variable CRM_AUTH is not set');
    expect(parseMcpConfig(text, 'config/mcp.yaml', {}, { secrets: 'optional' }).servers[0]!.transport).toEqual({ kind: 'http', url: 'https://x/mcp', headers: { Authorization: '' } });
  });
});

describe('config/mcp.yaml in an application', () => {
  let t: TempApp | undefined;
  afterEach(() => {
    t?.cleanup();
    t = undefined;
  });

  it('is reloaded when it changes, keeps the last good version when a change is broken, and is part of the policy revision', () => {
    t = tempApp();
    const file = join(t.app.configDir, 'mcp.yaml');
    const before = t.app.currentRevision();
    writeFileSync(file, 'servers:\n  - id: files\n    command: run-files\n');
    expect(t.app.mcpFile.reload(true)).toBe(true);
    expect(t.app.mcpFile.current.servers.map((s) => s.id)).toEqual(['files']);
    const withFiles = t.app.currentRevision();
    expect(withFiles).not.toBe(before);
    writeFileSync(file, 'servers:\n  - id: files\n    command: run-files\n  - id: Broken\n');
    t.app.mcpFile.reload(true);
    expect(t.app.mcpFile.current.servers.map((s) => s.id)).toEqual(['files']);
    expect(t.app.mcpFile.status().error).toMatch(/mcp\.yaml:4:9: servers\.1\.id/);
    expect(t.app.currentRevision()).toBe(withFiles);
  });
});

describe('the commands a configuration from the database may start', () => {
  it('are those of the mcp.yaml on the disk and of the list SWARM_MCP_ALLOWED_COMMANDS names, each exactly', () => {
    const dir = mkdtempSync(join(tmpdir(), 'swarm-mcp-allowed-'));
    try {
      const disk = join(dir, 'mcp.yaml');
      writeFileSync(disk, 'servers:\n  - id: fs\n    command: npx\n    args: [-y, "@modelcontextprotocol/server-filesystem", /data]\n');
      const list = join(dir, 'allowed-commands');
      writeFileSync(list, '# reviewed by the platform team\n/usr/local/bin/notes-mcp --read-only\n\n');
      const allowed = allowedCommandsOnDisk(disk, { SWARM_MCP_ALLOWED_COMMANDS: list });
      const server = (command: string, args: string[]) => `servers:\n  - id: s\n    command: ${command}\n    args: ${JSON.stringify(args)}\n`;
      expect(parseMcpConfig(server('npx', ['-y', '@modelcontextprotocol/server-filesystem', '/data']), 'r/mcp.yaml', {}, { allowedCommands: allowed }).servers).toHaveLength(1);
      expect(parseMcpConfig(server('/usr/local/bin/notes-mcp', ['--read-only']), 'r/mcp.yaml', {}, { allowedCommands: allowed }).servers).toHaveLength(1);
      // Another argument is another command (npx -y runs whatever package it is given).
      expect(() => parseMcpConfig(server('npx', ['-y', 'some-other-package']), 'r/mcp.yaml', {}, { allowedCommands: allowed })).toThrow(
        /r\/mcp\.yaml:3:14: servers\.0\.command: "npx -y some-other-package" is not a command this server may start/,
      );
      // A list that cannot be read is an error, never an empty or an open list.
      expect(() => allowedCommandsOnDisk(disk, { SWARM_MCP_ALLOWED_COMMANDS: join(dir, 'missing') })).toThrow(/ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
