#!/usr/bin/env node
// The `swarm` command: runs cli/main.ts from one bundle of its sources, made the first time and whenever a source
// changed, or through tsx where that bundle cannot be had (bin/bundle.mjs).
// Works as `npx swarm ...`, `npm run swarm -- ...` and `node bin/swarm.mjs ...`, from any directory.
import { runEntry } from './bundle.mjs';

await runEntry('cli/main.ts');
