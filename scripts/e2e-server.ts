/**
 * The server the end-to-end tests drive: the real production build (`next start`) on a fresh SQLite file, seeded
 * with one user per role. Started by Playwright's webServer (see playwright.config.ts).
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createApp } from '../lib/app';
import { E2E } from '../e2e/fixtures/accounts';

const db = process.env.SWARM_DB ?? join('data', 'e2e.db');
for (const suffix of ['', '-wal', '-shm']) rmSync(`${db}${suffix}`, { force: true });

const env = { ...process.env, SWARM_DB: db };
const app = createApp({ dbPath: db, env });
app.bootstrap();
for (const u of E2E.users) if (u.username !== 'admin') app.auth.createUser(u.username, u.role, u.password);
app.auth.ensureToken(E2E.deployerToken, { agent: 'deployer' }, 'e2e deployer agent');
app.close();

const server = spawn(process.execPath, [join('node_modules', 'next', 'dist', 'bin', 'next'), 'start', '-p', String(E2E.port)], { stdio: 'inherit', env });
for (const s of ['SIGINT', 'SIGTERM'] as const) process.on(s, () => server.kill(s));
server.on('exit', (code) => process.exit(code ?? 0));
