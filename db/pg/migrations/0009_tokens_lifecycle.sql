-- The lifecycle of tokens (issue 27): an expiry, the last use, scopes, the token a rotation replaced, and the sweeper's
-- disabling (expired, or unused too long). Existing tokens keep what they could do: an agent's token `decide`, a
-- person's token the scope of the person's role (admin: admin, operator: operate, auditor and viewer: read).
-- (The token cache is told of changes by the auth store's publish on the change feed; a last-use write publishes nothing.)
ALTER TABLE "api_tokens" ADD COLUMN "expires_at" double precision;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "last_used_at" double precision;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "scopes" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "rotated_from" bigint;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "disabled_at" double precision;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "disabled_reason" text;--> statement-breakpoint
UPDATE "api_tokens" SET "scopes" = 'decide' WHERE "agent_name" IS NOT NULL;--> statement-breakpoint
UPDATE "api_tokens" t SET "scopes" = CASE u."role" WHEN 'admin' THEN 'admin' WHEN 'operator' THEN 'operate' ELSE 'read' END FROM "users" u WHERE u."id" = t."user_id" AND t."agent_name" IS NULL;
