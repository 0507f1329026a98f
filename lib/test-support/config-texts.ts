/**
 * Configuration texts shared by an in-process test and the browser test of the same feature (each writes them into
 * the configuration folder of the server it starts): the hooks of every kind, and two gates with conditions.
 */

/** A hooks.yaml with a block, a rewrite, a rate limit, webhooks to `url` on every event and a shell hook logging to `shellLog`. */
export const hooksYaml = (url: string, shellLog: string) => `
hooks:
  - id: no-rival-mail
    event: before_tool_call
    match: { tool: send_email }
    when: "args.to.endsWith('@rival.example')"
    block: Mail to competitors is not sent by agents.
  - id: drop-bcc
    event: before_tool_call
    match: { tool: send_email }
    rewrite: { remove: [bcc] }
  - id: drift-rate
    event: before_tool_call
    match: { tool: monitor_drift }
    rate_limit: { calls: 2, per: 10m }
  - id: rollback-review
    event: before_tool_call
    match: { tool: rollback_serving }
    webhook: { url: "${url}", secret_env: SWARM_HOOK_SECRET, timeout: 3s, retries: 0 }
    description: The release desk reviews every rollback.
  - id: page-operators
    event: approval_requested
    webhook: { url: "${url}", secret_env: SWARM_HOOK_SECRET }
  - id: tell-denied
    event: denied
    match: { agent: deployer }
    webhook: { url: "${url}", secret_env: SWARM_HOOK_SECRET }
  - id: tell-decided
    event: approval_decided
    webhook: { url: "${url}", secret_env: SWARM_HOOK_SECRET }
  - id: tell-ran
    event: after_tool_call
    webhook: { url: "${url}", secret_env: SWARM_HOOK_SECRET }
  - id: promote-review
    event: before_tool_call
    match: { tool: promote_challenger }
    shell: { command: ["${process.execPath}", "-e", "let s='';process.stdin.on('data',c=>s+=c).on('end',()=>{require('fs').appendFileSync('${shellLog}',s+'\\\\n');const e=JSON.parse(s);console.log(JSON.stringify(e.call.arguments.model_id==='m-bad'?{decision:'block',reason:'The champion stays.'}:{decision:'allow'}))})"], timeout: 5s }
`;

/** A gates.yaml: production deploys need two people, production rollbacks one. */
export const GATES_YAML = `
gates:
  - id: deploy
    tools: [deploy_serving, promote_challenger]
    when: "args.env == 'prod'"
    approvers: { roles: [operator, admin], count: 2 }
    risk: high
    description: Production deployments change what customers see.
  - id: prod-rollback
    tools: [rollback_serving]
    when: "args.env == 'prod'"
    risk: medium
    description: A production rollback changes what customers see.
`;
