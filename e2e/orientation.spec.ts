/**
 * A newcomer's first steps (issue 41, item 7): the sign-in page says who signs in here and links the API reference,
 * which answers without a session; the console's navigation links it too; the browser's icon request is answered.
 */
import { expect, test } from '@playwright/test';
import { signIn } from './fixtures/session';

test('the sign-in page orients a newcomer and links the API reference; the favicon is served', async ({ page, request }) => {
  await page.goto('/login');
  await expect(page.getByText(/^New here\? People sign in to decide gated calls/)).toBeVisible();
  await page.getByRole('link', { name: 'API reference' }).click();
  await expect(page).toHaveURL(/\/api-docs$/);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  const icon = await request.get('/favicon.ico');
  expect(icon.status()).toBe(200);
  expect(icon.headers()['content-type']).toMatch(/image\/(x-icon|vnd\.microsoft\.icon)/);
});

test('the console\'s navigation links the documentation and the API reference for every role', async ({ page }) => {
  await signIn(page, 'victor');
  await page.goto('/transparency');
  const nav = page.getByRole('navigation', { name: 'Console' });
  await expect(nav.getByRole('link', { name: /API reference/ })).toHaveAttribute('href', '/api-docs');
  // the documentation of the page it is on
  await expect(nav.getByRole('link', { name: /Documentation/ })).toHaveAttribute('href', '/docs/feature-flags');
});

test('/docs serves the README and docs/ without a session, and their links lead from page to page', async ({ page }) => {
  await page.goto('/login');
  await page.getByRole('link', { name: 'documentation' }).click();
  await expect(page).toHaveURL(/\/docs$/);
  const index = page.getByRole('list', { name: 'Documentation pages' });
  for (const title of ['Swarm Permissions (README)', 'Threat model']) await expect(index.getByRole('link', { name: new RegExp(title.replace(/[()]/g, '\\$&')) })).toBeVisible();
  await index.getByRole('link', { name: /README/ }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Swarm Permissions' })).toBeVisible();
  await expect(page.locator('h2#quick-start')).toHaveText('Quick start');
  // A link of the README to a page of docs/ opens that page here.
  await page.getByRole('link', { name: 'the threat model' }).click();
  await expect(page).toHaveURL(/\/docs\/threat-model$/);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  expect((await page.request.get('/docs/../../etc/passwd')).status()).toBe(404);
  expect((await page.request.get('/docs/no-such-page')).status()).toBe(404);
});

test('a console page sends its shell and a loading line first, then its data: never a blank screen while it is read', async ({ page }) => {
  await signIn(page, 'alex');
  const res = await page.request.get('/denials');
  expect(res.status()).toBe(200);
  const html = await res.text();
  // The navigation and the loading line come first (streamed), the page's own content after them in the same answer.
  const nav = html.indexOf('aria-label="Console"');
  const loading = html.indexOf('Loading…');
  expect(nav).toBeGreaterThan(-1);
  expect(loading).toBeGreaterThan(nav);
  // the page's own output (its explorer's first words) after the loading line
  expect(html.indexOf('Loading the denial explorer', loading)).toBeGreaterThan(loading);
  // and a refused page still answers 403: its role is checked before anything of it streams
  await signIn(page, 'victor');
  expect((await page.request.get('/denials')).status()).toBe(403);
});
