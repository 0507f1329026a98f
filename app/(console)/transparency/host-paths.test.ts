import { describe, expect, it } from 'vitest';
import type { McpTransparency } from '@/lib/mcp/transparency';
import { mcpWithoutHostPaths } from './host-paths';

const cwd = '/home/ops/swarm';

const section = (over: Partial<McpTransparency['servers'][number]> = {}): McpTransparency => ({
  file: { path: '/home/ops/swarm/config/mcp.yaml', loaded_at: 1, error: '/home/ops/swarm/config/mcp.yaml:4:5 servers.0.id: duplicate server id "files"', missing: false, pinned: false, drift: false },
  separator: '__',
  approval_wait_seconds: 600,
  servers: [
    {
      id: 'files',
      description: null,
      transport: 'stdio',
      shown: 'node /home/ops/swarm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js /srv/private/shared',
      env_from: ['FILES_TOKEN'],
      on_ask: 'wait',
      position: '/home/ops/swarm/config/mcp.yaml:3:5',
      state: 'restarting',
      tools: 0,
      last_error: { message: 'spawn /opt/tools/bin/mcp-files ENOENT', at: 1 },
      restarts: 2,
      ...over,
    },
  ],
  tools: [],
  agents: [],
  pins: { change_control: false, hold_new_tools: [], pins: [], held: [] },
});

describe('the MCP section of /transparency without host paths', () => {
  it('names the file, the command, its position and its errors relative to the working directory, or by the file name alone', () => {
    const m = mcpWithoutHostPaths(section(), cwd);
    expect(m.file.path).toBe('config/mcp.yaml');
    expect(m.file.error).toBe('config/mcp.yaml:4:5 servers.0.id: duplicate server id "files"');
    const s = m.servers[0]!;
    expect(s.shown).toBe('node node_modules/@modelcontextprotocol/server-filesystem/dist/index.js shared');
    expect(s.position).toBe('config/mcp.yaml:3:5');
    expect(s.last_error?.message).toBe('spawn mcp-files ENOENT');
    // What is not a path is left as it is.
    expect(s.env_from).toEqual(['FILES_TOKEN']);
  });

  it('leaves a URL server and a server without an error alone', () => {
    const m = mcpWithoutHostPaths(section({ transport: 'http', shown: 'https://mcp.example.com/mcp', last_error: null }), cwd);
    expect(m.servers[0]!.shown).toBe('https://mcp.example.com/mcp');
    expect(m.servers[0]!.last_error).toBeNull();
    const failing = mcpWithoutHostPaths(section({ last_error: { message: 'fetch https://mcp.example.com/a/b failed; see /var/log/mcp/files.log', at: 1 } }), cwd);
    expect(failing.servers[0]!.last_error?.message).toBe('fetch https://mcp.example.com/a/b failed; see files.log');
  });
});
