/**
 * Policy revisions: what was in force when a decision was made. A revision is the content hash of the configuration
 * files (agents, policy, gates, hooks, MCP servers), the effective flag values, the active profiles and the MCP tool
 * definitions pinned (a pin accepted is a new revision); its full content is kept once, content-addressed, in
 * policy_revisions, so `swarm audit explain` can re-run a decision against the revision it was made under.
 *
 * The id is pure (AppBase.currentRevision); the content is written by the recorder of each database in the
 * transaction of the first row that names it (recorder.ts on SQLite, pg-recorder.ts on PostgreSQL), so a row never
 * names a revision that is not stored. What is read back goes through one store for both databases (RevisionStore).
 */
import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { SqlDatabase } from '@/db/dialect';
import { canonicalJson } from '@/lib/approvals/canonical';

export interface RevisionContent {
  /** the texts of the files in force (null: the file is absent) and the policy file's name */
  files: { agents: string | null; policy: string | null; gates: string | null; policy_file: string; hooks?: string; mcp?: string };
  /** effective flag values, by name */
  flags: Record<string, boolean>;
  /** the active compliance profiles and the texts of their files (absent: none was active) */
  profiles?: { name: string; folder: string; texts: { profile: string; policy?: string; gates?: string; tests?: string } }[];
  /**
   * the MCP gateway's pins in force (lib/mcp/pins): server id, then the upstream's tool name, to the SHA-256 of its
   * accepted definition (absent: none, so the revisions of a configuration without MCP tools stay as they were)
   */
  mcp_pins?: Record<string, Record<string, string>>;
}

/** `rev_` and the first 128 bits of the SHA-256 of the canonical content. */
export function revisionOf(content: RevisionContent): string {
  return `rev_${createHash('sha256').update(canonicalJson(content)).digest('hex').slice(0, 32)}`;
}

/** The kept revisions, as explain and the checks read them. */
export interface RevisionStore {
  /** the content kept for a revision (undefined: not kept in this database) */
  get(revision: string): Promise<RevisionContent | undefined>;
  /** how many revisions are kept */
  count(): Promise<number>;
}

export class SqlRevisionStore implements RevisionStore {
  constructor(private readonly db: SqlDatabase) {}

  async get(revision: string): Promise<RevisionContent | undefined> {
    const row = await this.db.one<{ contentJson: string }>(sql`SELECT content_json AS "contentJson" FROM policy_revisions WHERE revision = ${revision}`);
    return row ? (JSON.parse(row.contentJson) as RevisionContent) : undefined;
  }

  async count(): Promise<number> {
    return Number((await this.db.one<{ n: number }>(sql`SELECT count(*) AS n FROM policy_revisions`))?.n ?? 0);
  }
}
