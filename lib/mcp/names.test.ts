import { describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { nameTools } from './names';

const up = (id: string) => ({ config: { id } });
const tools = (...names: string[]): Tool[] => names.map((name) => ({ name, inputSchema: { type: 'object' } }));

describe('names that cannot impersonate', () => {
  it('lists a tool as <server><separator><tool> when nothing else could answer to that name', () => {
    const files = up('files');
    const { listed, refused } = nameTools([{ upstream: files, tools: tools('read_file', 'write_file') }], '__');
    expect(listed.map((t) => t.name)).toEqual(['files__read_file', 'files__write_file']);
    expect(refused).toEqual([]);
  });

  it('refuses a tool whose own name holds the separator: it would read as another server\'s tool', () => {
    const { listed, refused } = nameTools([{ upstream: up('files'), tools: tools('admin__delete', 'ok') }], '__');
    expect(listed.map((t) => t.name)).toEqual(['files__ok']);
    expect(refused.map((r) => [r.tool, r.reason])).toEqual([['admin__delete', 'separator']]);
    expect(refused[0]!.message).toMatch(/holds the separator "__"/);
  });

  it('refuses a tool named like the gateway\'s own decisions (read_resource, get_prompt)', () => {
    const { listed, refused } = nameTools([{ upstream: up('files'), tools: tools('read_resource', 'get_prompt', 'read_resources') }], '__');
    expect(listed.map((t) => t.name)).toEqual(['files__read_resources']);
    expect(refused.map((r) => [r.tool, r.reason])).toEqual([
      ['read_resource', 'reserved'],
      ['get_prompt', 'reserved'],
    ]);
  });

  it('refuses both tools when one server\'s listed name is another\'s (a separator of letters lets "b"+"aa"+"ax" be "ba"+"aa"+"x")', () => {
    const b = up('b');
    const ba = up('ba');
    const { listed, refused } = nameTools([{ upstream: b, tools: tools('ax', 'y') }, { upstream: ba, tools: tools('x') }], 'aa');
    expect(listed.map((t) => t.name)).toEqual(['baay']);
    expect(refused.map((r) => [r.upstream.config.id, r.tool, r.reason])).toEqual([
      ['b', 'ax', 'collision'],
      ['ba', 'x', 'collision'],
    ]);
    expect(refused[0]!.message).toMatch(/would be listed as "baaax", the name of "x" of server "ba": neither is listed/);
  });

  it('refuses a name a server lists twice, once', () => {
    const { listed, refused } = nameTools([{ upstream: up('files'), tools: tools('dup', 'dup') }], '__');
    expect(listed).toEqual([]);
    expect(refused.map((r) => [r.tool, r.reason])).toEqual([['dup', 'collision']]);
  });
});
