/**
 * The layering of the house (docs/architecture.md, "The dependency rules"), checked by dependency-cruiser:
 * `npm run lint:deps`. Test files (`*.test.ts`) and the test-support modules are not production code and are not
 * checked as importers. Type-only imports count: `import type` is still an arrow between layers.
 *
 * The parser is swc (@swc/core): dependency-cruiser 17 reads TypeScript through the `typescript` package's compiler
 * API of versions 2 to 6, and this project's TypeScript 7 has none, so without swc it would find no .ts file at all and
 * pass on nothing. swc keeps `import type` arrows. It does not read .tsx, so .tsx files (pages, in app/) are not followed:
 * an arrow from lib into them is still seen. The `@/` alias resolves through tsconfig.json's paths.
 */
try {
  require.resolve('@swc/core');
} catch {
  throw new Error('lint:deps needs @swc/core (a devDependency): run npm install. Without it no TypeScript file would be checked.');
}

const TEST_FILE = '\\.test\\.tsx?$';
const TEST_SUPPORT = '^lib/test-support/';
const NOT_PRODUCTION = [TEST_FILE, TEST_SUPPORT];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular-lib',
      severity: 'error',
      comment: 'Modules of lib (and db) import one another without a cycle: a lower module takes what it uses instead of importing a higher one.',
      from: { path: '^(lib|db)/', pathNot: NOT_PRODUCTION },
      to: { path: '^(lib|db)/', pathNot: NOT_PRODUCTION, circular: true },
    },
    {
      name: 'lib-not-app',
      severity: 'error',
      comment: 'lib (and db) never import app (the pages and route adapters) nor cli: data flows from the adapters into lib.',
      from: { path: '^(lib|db)/', pathNot: NOT_PRODUCTION },
      to: { path: '^(app|cli)/' },
    },
    {
      name: 'permissions-self-contained',
      severity: 'error',
      comment: 'The engine (lib/permissions) imports nothing of the project outside itself but lib/errors.',
      from: { path: '^lib/permissions/', pathNot: NOT_PRODUCTION },
      to: {
        path: '^(lib|db|app|cli|packages|types|config|scripts)/',
        pathNot: ['^lib/permissions/', '^lib/errors\\.ts$'],
      },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules', '\\.tsx$'] },
    exclude: { path: ['^node_modules', '^\\.next/', '^data/'] },
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.d.ts', '.js', '.mjs', '.cjs', '.json'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
