import { describe, expect, it } from 'vitest';
import { splitMcpTool, toolWords } from './mcp-tool-name';

const naming = { separator: '__', servers: ['files', 'everything'] };

describe('the MCP tool name on approval cards', () => {
  it('splits a namespaced name into its configured server and the upstream tool', () => {
    expect(splitMcpTool('files__write_file', naming)).toEqual({ server: 'files', tool: 'write_file' });
    // Only the first separator ends the server id: the upstream's own name may contain it.
    expect(splitMcpTool('everything__get__sum', naming)).toEqual({ server: 'everything', tool: 'get__sum' });
  });

  it('leaves a name alone when its prefix is not a configured server, or nothing follows the separator', () => {
    expect(splitMcpTool('deploy__v2', naming)).toBeNull();
    expect(splitMcpTool('deploy_serving', naming)).toBeNull();
    expect(splitMcpTool('files__', naming)).toBeNull();
    expect(splitMcpTool('__write_file', naming)).toBeNull();
    expect(splitMcpTool('files__write_file', { separator: '__', servers: [] })).toBeNull();
  });

  it('uses the configured separator', () => {
    expect(splitMcpTool('files.write_file', { separator: '.', servers: ['files'] })).toEqual({ server: 'files', tool: 'write_file' });
    expect(splitMcpTool('files__write_file', { separator: '.', servers: ['files'] })).toBeNull();
  });

  it('says the tool in words for a label read aloud', () => {
    expect(toolWords('files__write_file', naming)).toBe('write_file on the MCP server files');
    expect(toolWords('deploy_serving', naming)).toBe('deploy_serving');
  });
});
