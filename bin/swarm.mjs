#!/usr/bin/env node
// The `swarm` command: loads the TypeScript sources through tsx, then runs cli/main.ts.
// Works as `npx swarm ...`, `npm run swarm -- ...` and `node bin/swarm.mjs ...`, from any directory.
import { register } from 'tsx/esm/api';

register();
await import(new URL('../cli/main.ts', import.meta.url).href);
