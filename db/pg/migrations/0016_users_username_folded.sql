-- One user name whatever the case of its letters (issue 42, item 3): a person of a provider called "ADMIN" was created
-- beside the local "admin". Folded under the "C" collation, so ASCII only whatever the database's locale, as
-- lib/auth/user-name.ts folds. A database that already holds two names differing only in case stops here, naming
-- them: rename the one not wanted by hand (its seal then fails: it signs in as nobody, its tokens stop), then migrate
-- again.
DO $$
DECLARE
  taken text;
BEGIN
  SELECT string_agg(names, '; ') INTO taken FROM (
    SELECT string_agg(username, ', ' ORDER BY id) AS names FROM users GROUP BY lower(username COLLATE "C") HAVING count(*) > 1
  ) same;
  IF taken IS NOT NULL THEN
    RAISE EXCEPTION 'users whose names differ only in the case of their letters: %. A name is now one name whatever its case: rename all but one of each, then migrate again.', taken;
  END IF;
END $$;--> statement-breakpoint
CREATE UNIQUE INDEX "users_username_folded" ON "users" USING btree (lower("username" COLLATE "C"));
