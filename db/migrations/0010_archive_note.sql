-- An archive record carries the signed checkpoint that ends the archived prefix (with its `archive` extension line),
-- so that verification trusts no archive record it cannot check against the installation's key (lib/audit/verify.ts).
ALTER TABLE `audit_archives` ADD `note` text;
