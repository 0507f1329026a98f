import { defineConfig } from '@playwright/test';
import { E2E, E2E_WORKERS, e2ePort } from './e2e/fixtures/accounts';

/**
 * End-to-end tests: Debian's Chromium (never a downloaded browser) against the real production build.
 * `npm run test:e2e` builds first. Each worker drives a server of its own, on its own port with a fresh database
 * (e2e/fixtures/accounts.ts): specs run side by side and never see each other's rows.
 */
export default defineConfig({
  testDir: 'e2e',
  outputDir: process.env.E2E_OUTPUT_DIR ?? 'test-results',
  fullyParallel: false,
  workers: E2E_WORKERS,
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
  webServer: Array.from({ length: E2E_WORKERS }, (_, index) => ({
    command: 'node --import tsx scripts/e2e-server.ts',
    url: `http://localhost:${e2ePort(index)}/api/v1/health`,
    reuseExistingServer: false,
    timeout: 120_000,
    env: {
      E2E_PORT: String(e2ePort(index)),
      SWARM_DB: `data/e2e-${e2ePort(index)}.db`,
      SWARM_ADMIN_PASSWORD: E2E.users[0].password,
      SWARM_ADMIN_TOKEN: E2E.adminToken,
      SWARM_CONFIG_DIR: 'config',
      SWARM_PROFILE: 'bfsi',
    },
  })),
});
