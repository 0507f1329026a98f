import { defineConfig } from 'drizzle-kit';

/** PostgreSQL: the same tables as drizzle.config.ts (SQLite), from db/pg/schema.ts into db/pg/migrations. */
export default defineConfig({
  dialect: 'postgresql',
  schema: './db/pg/schema.ts',
  out: './db/pg/migrations',
});
