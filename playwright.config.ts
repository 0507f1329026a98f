import { defineConfig } from '@playwright/test';
import { E2E } from './e2e/fixtures/accounts';

/**
 * End-to-end tests: Debian's Chromium (never a downloaded browser) against the real production build.
 * `npm run test:e2e` builds first; the server runs on its own port with a fresh database.
 */
export default defineConfig({
  testDir: 'e2e',
  outputDir: process.env.E2E_OUTPUT_DIR ?? 'test-results',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 30_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  use: {
    baseURL: `http://localhost:${E2E.port}`,
    browserName: 'chromium',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', '--no-first-run'],
    },
    screenshot: 'only-on-failure',
    trace: 'off',
  },
  webServer: {
    command: 'node --import tsx scripts/e2e-server.ts',
    url: `http://localhost:${E2E.port}/api/v1/health`,
    reuseExistingServer: false,
    timeout: 120_000,
    env: {
      SWARM_DB: `data/e2e-${E2E.port}.db`,
      SWARM_ADMIN_PASSWORD: E2E.users[0].password,
      SWARM_ADMIN_TOKEN: E2E.adminToken,
      SWARM_CONFIG_DIR: 'config',
      SWARM_PROFILE: 'bfsi',
    },
  },
});
