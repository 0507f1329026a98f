-- One user name whatever the case of its letters (issue 42, item 3): a person of a provider called "ADMIN" was created
-- beside the local "admin". lower() folds ASCII only, as lib/auth/user-name.ts does. A database that already holds two
-- names differing only in case stops here (UNIQUE constraint failed: index 'users_username_folded'): find them with
-- SELECT id, username, issuer FROM users WHERE lower(username) IN (SELECT lower(username) FROM users GROUP BY 1 HAVING count(*) > 1);
-- and rename the one not wanted by hand (its seal then fails: it signs in as nobody, its tokens stop), then start again.
CREATE UNIQUE INDEX `users_username_folded` ON `users` (lower("username"));
