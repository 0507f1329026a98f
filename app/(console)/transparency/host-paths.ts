/**
 * /transparency without the host's paths: the page is printed and shared (its print button makes a PDF), so a file is
 * named relative to the server's working directory (config/permission_policies.yaml) or by its name alone, and paths
 * inside error messages are reduced the same way. The JSON API (GET /api/v1/flags) is not changed here.
 */
import type { TransparencyReport } from '@/lib/flags/transparency';
import type { McpTransparency } from '@/lib/mcp/transparency';
import { displayFile, withoutPaths } from '@/lib/reports/paths';

type FileJson = TransparencyReport['sources']['policy']['file'];

/** Paths reduced, URLs kept whole (a Streamable HTTP server's URL, or one in its error, is not a file path). */
function withoutPathsKeepingUrls(text: string, cwd: string): string {
  return text
    .split(/([a-z][a-z0-9+.-]*:\/\/[^\s'"`<>]+)/i)
    .map((part, i) => (i % 2 === 1 ? part : withoutPaths(part, cwd)))
    .join('');
}

/** The MCP section: its file, and the commands and errors of its servers (a command names its script by path). */
export function mcpWithoutHostPaths(m: McpTransparency, cwd = process.cwd()): McpTransparency {
  return {
    ...m,
    file: { ...m.file, path: displayFile(m.file.path, cwd), error: m.file.error ? withoutPathsKeepingUrls(m.file.error, cwd) : m.file.error },
    servers: m.servers.map((s) => ({
      ...s,
      shown: withoutPathsKeepingUrls(s.shown, cwd),
      position: withoutPathsKeepingUrls(s.position, cwd),
      last_error: s.last_error ? { ...s.last_error, message: withoutPathsKeepingUrls(s.last_error.message, cwd) } : null,
    })),
  };
}

function file<F extends FileJson | null>(f: F): F {
  if (f === null) return f;
  return { ...f, path: displayFile(f.path), error: f.error ? withoutPaths(f.error) : f.error };
}

export function withoutHostPaths(r: TransparencyReport): TransparencyReport {
  const s = r.sources;
  return {
    ...r,
    problems: r.problems.map((p) => ({ ...p, message: withoutPaths(p.message) })),
    sources: {
      ...s,
      policy: { ...s.policy, file: file(s.policy.file) },
      gates: { ...s.gates, file: file(s.gates.file) },
      agents: { ...s.agents, file: file(s.agents.file) },
      tests: s.tests.map((t) => ({ ...t, file: file(t.file) })),
    },
    hooks: { ...r.hooks, file: file(r.hooks.file) },
    profiles: { ...r.profiles, active: r.profiles.active.map((p) => ({ ...p, folder: displayFile(p.folder) })) },
    mcp: r.mcp ? mcpWithoutHostPaths(r.mcp) : r.mcp,
  };
}
