-- Policy seals (issue 39): a vote and an activation carry a MAC with the installation's key (lib/auth/seal.ts); a
-- vote without a valid one counts for nothing, an activation without one is not loaded.
ALTER TABLE "policy_activations" ADD COLUMN "mac" text;--> statement-breakpoint
ALTER TABLE "policy_votes" ADD COLUMN "mac" text;