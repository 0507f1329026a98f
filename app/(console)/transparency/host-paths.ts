/**
 * /transparency without the host's paths: the page is printed and shared (its print button makes a PDF), so a file is
 * named relative to the server's working directory (config/permission_policies.yaml) or by its name alone, and paths
 * inside error messages are reduced the same way. The JSON API (GET /api/v1/flags) is not changed here.
 */
import type { TransparencyReport } from '@/lib/flags/transparency';
import { displayFile, withoutPaths } from '@/lib/reports/paths';

type FileJson = TransparencyReport['sources']['policy']['file'];

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
  };
}
