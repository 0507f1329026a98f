-- Back-channel logout tokens taken (issue 42, item 4): each jti of an issuer is kept until its token's iat plus the
-- age a logout token may have (lib/sso/logout-token.ts), so a replayed token is refused; the sweeper deletes the rows
-- past that time.
CREATE TABLE "sso_logout_tokens" (
	"issuer" text NOT NULL,
	"jti" text NOT NULL,
	"expires_at" double precision NOT NULL,
	CONSTRAINT "sso_logout_tokens_issuer_jti_pk" PRIMARY KEY("issuer","jti")
);
--> statement-breakpoint
CREATE INDEX "sso_logout_tokens_expiry" ON "sso_logout_tokens" USING btree ("expires_at");