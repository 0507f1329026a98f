#!/usr/bin/env node
// `node bin/run.mjs ENTRY [args...]`: run one of this repository's TypeScript entries (scripts/start.ts for npm start, a
// listener worker) as the `swarm` command runs: from a bundle of its sources, or through tsx (bin/bundle.mjs). The entry
// sees its own arguments in process.argv, as under `node --import tsx ENTRY`.
import { runEntry } from './bundle.mjs';

const entry = process.argv[2];
if (!entry) {
  console.error('usage: node bin/run.mjs ENTRY.ts [args...]');
  process.exit(2);
}
process.argv.splice(2, 1);
await runEntry(entry);
