#!/usr/bin/env node
// The `swarm` command: loads the TypeScript sources through tsx, then runs cli/main.ts.
// Works as `npx swarm ...`, `npm run swarm -- ...` and `node bin/swarm.mjs ...`, from any directory: tsx is pointed
// at this repository's tsconfig.json so that the `@/` import alias resolves wherever the command is run.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import(new URL('../cli/main.ts', import.meta.url).href);
