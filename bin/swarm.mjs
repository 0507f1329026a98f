#!/usr/bin/env node
// The `swarm` command: runs cli/main.ts, from one bundle of the sources made the first time and whenever a source
// changed (bin/cli-bundle.mjs), or, where that bundle cannot be had, through tsx from the sources themselves.
// Works as `npx swarm ...`, `npm run swarm -- ...` and `node bin/swarm.mjs ...`, from any directory: tsx is pointed
// at this repository's tsconfig.json so that the `@/` import alias resolves wherever the command is run.
import { fileURLToPath } from 'node:url';
import { bundledCli } from './cli-bundle.mjs';

const bundle = await bundledCli(fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, ''));
if (bundle) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
  await import(new URL('../cli/main.ts', import.meta.url).href);
}
