-- Flag override seals (issue 39): an override carries a MAC with the installation's key (lib/auth/seal.ts); one
-- without a valid one is not in force. Overrides from before are sealed once at start, with the credentials.
ALTER TABLE "flag_overrides" ADD COLUMN "mac" text;