export const USAGE = `swarm: the Swarm Permissions command line.

Usage: swarm <command> [options]

Users and tokens
  swarm users add NAME --role viewer|auditor|operator|admin [--password PW] [--token-name LABEL]
      Create a user and print an API token for it (shown once).
  swarm tokens add --agent NAME [--name LABEL] [--expires 30d]
  swarm tokens add --user NAME [--name LABEL] [--expires 30d] [--scopes read|operate|admin]
      Create an API token for an agent or a user (shown once). An agent's token is scoped
      decide (checks, AuthZEN, MCP); a person's token defaults to the scope of their role
      and can never go above it. --expires: a duration (30d, 12h) or never; default the
      profile's token_max_days (bfsi: 90 days), else never.
  swarm tokens list
  swarm tokens revoke ID
      List tokens (no secrets: scopes, expiry, last use, state), or revoke one: it stops
      authenticating at once.
  swarm tokens rotate ID [--overlap 24h]
      A new token with the same owner, name and scopes (shown once); the old one keeps
      working for the overlap, then expires.
  swarm users set-role NAME viewer|auditor|operator|admin
  swarm users unlock NAME
      Lift the lock a compliance profile put on a user name after failed sign-ins.

Audit
  swarm denials [--since SECONDS] [--agent A] [--tool T] [--role R] [--rule-source S]
                [--limit N] [--cursor C] [--json | --csv]
      Permission denials, newest first. --rule-source without a colon matches the whole
      family (policy matches every policy:*). --json prints one page with next_cursor;
      --csv exports every matching row.
  swarm audit events [--since SECONDS] [--type T] [--actor A] [--outcome O] [--limit N] [--json]
      Security events (sign-ins, approvals, flag and configuration changes, audit reads...),
      newest first. --type without a dot matches the family (auth matches auth.*).
  swarm audit verify [--db FILE|URL] [--public-key FILE] [--witness DIR|URL]... [--archive FILE]... [--from DATE] [--to DATE] [--bundle FILE] [--json]
      Recompute the hash chains and check every signed checkpoint. Exit 0 when intact,
      1 naming the table, the first bad row and what is wrong; states what the checkpoints
      cover. --witness (repeatable): the trail must extend every checkpoint that witness
      holds (a rewrite, a cut or a rollback behind one is found and located). --archive
      (repeatable): an archive's bundle, which shows that the archive extends the witnessed
      checkpoints it covers when no witness holds a later one. With --from/--to: the range
      requested and the rows found in it.
  swarm audit witness --key-dir DIR --log DIR --trust FILE [--port N]
      Run a witness server (another team's): it checks that each checkpoint sent to it
      extends the last one it saw before it cosigns it with its own key.
  swarm audit checkpoint
      Sign the current chain heads and print the latest checkpoints (C2SP signed notes).
  swarm audit key
      Print the public key that verifies checkpoints; keep it somewhere else.
  swarm audit explain DECISION_ID [--json]
      Re-run a recorded decision under the policy revision it was made under and under
      today's configuration, and say whether they decide the same.
  swarm audit archive --before DATE -o FILE
      Move rows older than DATE into a signed bundle, verify it, then remove them.
  swarm audit report --from DATE --to DATE [--profile NAME] [--format pdf|oscal] -o FILE
      The audit report of the period FROM <= t < TO (dates are midnight UTC): summary,
      human oversight, changes, security events, flags, control mapping with evidence and
      the denials; as a PDF or as OSCAL assessment results. Exit 1 when the trail does not
      verify. Recorded as the security event audit.report_generated.

Policy
  swarm policy validate [FILE]
      Check a policy file (default: $SWARM_POLICY_FILE, else
      $SWARM_CONFIG_DIR/permission_policies.yaml). Problems are printed as FILE:LINE:COLUMN;
      rules that can never decide (shadowed or outvoted) are warned about with both positions.
  swarm policy test [FILE]
      Run the policy tests (default: $SWARM_CONFIG_DIR/policy_tests.yaml and the policy
      file's .test.yaml) against agents, policy and gates. Exit 0 when all pass, 3 when the
      configuration does not compile, 4 when a test fails.
  swarm policy impact DIR [--since 7d] [--json]
      Decide the tool calls recorded in the period (every denial; allowed and asked calls kept
      under decision_log_all) again under the configuration in DIR and under the one in force,
      and report every call whose decision or rule changes: by direction, agent and tool, with
      examples and their decision ids. Masked arguments are replayed masked (counted uncertain);
      hooks that block or rewrite run as they did (webhooks, shell hooks and rate limits are not
      replayed). Exit 0 nothing changes, 5 something does, 3 DIR does not compile.
  swarm policy propose DIR -m WHY [--as USER] [--since 7d] [--json]
      Store the rule files of DIR as a proposal with its impact and its policy tests' result
      (DIR's policy_tests.yaml if present, and the profiles' tests). Under a profile with
      change_control it takes effect only once approved. Exit 3 when DIR does not compile.
  swarm policy proposals [--status open|approved|activated|rejected|withdrawn] [--json]
  swarm policy vote ID approve|reject -m WHY --as USER
      A person's vote; the proposer cannot approve. The last approval needed activates the
      proposal on every server within a second.
  swarm policy history [--json]
      Every activation of the rules, newest first (the seed, proposals, emergency rollbacks).
  swarm policy rollback REVISION -m WHY [--as USER] [--emergency]
      Propose going back to an earlier activation's files; --emergency (the break-glass path)
      activates it at once without votes and records it as an emergency rollback.

Feature flags
  swarm features list [--json]
  swarm features set NAME on|off --reason TEXT --as ADMIN
  swarm features unset NAME --reason TEXT --as ADMIN
      Runtime overrides take effect in running servers within a second. Invariants cannot be
      turned off. Changes are attributed to --as (an admin user) or to cli:<os user>.

Approvals
  swarm approvals list [--status pending|approved|rejected|expired|consumed] [--gate G]
                       [--agent A] [--decided-by USER] [--limit N] [--json]
      DECIDED BY names everyone who decided, in order (both people of a two-person gate);
      --decided-by finds a request any of them decided.
  swarm approvals approve ID --as USER [--reason TEXT]
  swarm approvals reject ID --as USER --reason TEXT
      USER must be an operator or admin.

Agents you already run
  swarm hook claude-code [--agent NAME]
  swarm hook codex [--agent NAME]
      A PreToolUse command hook: reads the event on stdin, decides the tool call for the agent
      (default $SWARM_AGENT, else claude_code; tool names in lower case) and prints the answer
      (permissionDecision allow or deny, with the reason; a call that waits for an approval is
      denied with the request to decide). In process on SWARM_DB, or over REST with SWARM_URL
      and SWARM_TOKEN. Fails closed.

MCP gateway
  swarm mcp serve [--agent NAME] [--config-dir DIR]
      The MCP servers of config/mcp.yaml behind the engine, on stdio: give this command to an MCP
      client (Claude Desktop, Cursor, Claude Code) instead of the servers. Every tools/call is
      decided for the agent first: denied calls never reach a server, calls that need a person's
      approval wait for it (or answer with the approval to get). Decides over REST with SWARM_URL
      and the agent's SWARM_TOKEN, else in process on SWARM_DB as --agent (or SWARM_AGENT).
  swarm mcp pins [list] [--json]
  swarm mcp pins show SERVER TOOL
  swarm mcp pins accept SERVER TOOL --hash SHA256 --as USER --reason TEXT
      Each upstream tool's definition (name, description, schemas, annotations) is pinned as
      reviewed, at first sight (or held, under a profile with mcp.hold_new_tools). A tool whose
      definition changed is not listed and its calls are refused until an operator accepts the
      new one: list shows what is held, show the difference, accept pins the definition of that
      hash (USER: an operator or admin). Under change control, accept makes a proposal.

Database
  swarm db backup FILE [--force]
      An online backup of $SWARM_DB (SQLite's backup API), consistent while servers write.
      The public verifier key is copied beside it; check the copy with swarm audit verify --db FILE --public-key KEY.pub
      (the installation's key as you keep it: a key found beside a file is never trusted).
  swarm db check [--json]
      integrity_check, foreign keys, migrations applied and the audit chains verified.
      Exit 0 when all hold, 1 naming what does not.
  swarm db migrate [--db FILE|URL]
      Apply the committed migrations to a SQLite file or a PostgreSQL database. Servers do this
      when they start; several servers starting at once migrate once.
  swarm db copy --from FILE.db --to postgres://USER:PASSWORD@HOST:5432/DB [--public-key FILE] [--json]
      Move a SQLite trail to an empty PostgreSQL database: every table, ids and hashes unchanged,
      in one transaction; then both chains are verified there and compared with the source's heads.

  swarm help             this text (also: swarm --help, swarm COMMAND --help)

Environment
  SWARM_DB           database file (default data/swarm.db), or postgres://USER:PASSWORD@HOST:5432/DB: on PostgreSQL
                     every command runs but policy (no database), db backup and db check
                     (SQLite's own tools: on PostgreSQL use pg_dump and swarm audit verify)
  SWARM_CONFIG_DIR   folder with agents.yaml and permission_policies.yaml (default config)
  SWARM_POLICY_FILE  policy file (default $SWARM_CONFIG_DIR/permission_policies.yaml)
  SWARM_PROFILE      active compliance profiles, comma-separated (default: config/swarm.yaml)
  SWARM_DEBUG=1      print stack traces of unexpected errors

Exit status: 0 success, 1 failure or refusal, 2 usage error.
`;
