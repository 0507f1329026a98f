/**
 * One server at a time for the work that must not run twice at once (the approval sweeper, the signing of audit
 * checkpoints): a PostgreSQL session advisory lock held on a connection of its own. The server that holds it leads;
 * the others try again every interval. The lock belongs to the session, so a leader that dies or loses its connection
 * gives it up at once (PostgreSQL releases it when the session ends) and the next try of another server takes over.
 * A leader whose session was ended learns it when its connection reports the error, a moment later; the jobs led this
 * way are safe to overlap for that moment (an expiry is a conditional update, a second checkpoint of the same head
 * signs the same thing).
 */
import type pg from 'pg';
import { dedicatedClient } from '@/db/pg/client';

/** The advisory locks of the jobs that run on one server at a time (fixed 64-bit keys). */
export const LEADER_LOCKS = { sweeper: 7_318_221_905_010, checkpoints: 7_318_221_905_011 } as const;

export class Leadership {
  private client: pg.Client | undefined;
  private leading = false;
  private timer: NodeJS.Timeout | undefined;
  private trying: Promise<boolean> | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly key: number,
    private readonly onChange: (leading: boolean) => void = () => {},
  ) {}

  isLeader(): boolean {
    return this.leading;
  }

  /** Try to lead now (once); true when this server leads. */
  tryLead(): Promise<boolean> {
    this.trying ??= this.attempt().finally(() => (this.trying = undefined));
    return this.trying;
  }

  private async attempt(): Promise<boolean> {
    if (this.leading && this.client) return true;
    try {
      if (!this.client) {
        // A connection of its own (outside the pool): it holds the lock for as long as this server leads.
        const client = dedicatedClient(this.pool);
        await client.connect().catch((error: unknown) => {
          void client.end().catch(() => undefined);
          throw error;
        });
        client.on('error', () => this.lost(client));
        this.client = client;
      }
      const r = await this.client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [this.key]);
      this.set(r.rows[0]!.locked);
    } catch {
      if (this.client) this.lost(this.client);
    }
    return this.leading;
  }

  /** The connection is gone, and the lock with it. */
  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
    this.set(false);
  }

  private set(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    this.onChange(leading);
  }

  /** Try now and every `intervalMs` (default 1 s) until stopped. */
  start(intervalMs = 1_000): Promise<boolean> {
    this.timer = setInterval(() => void this.tryLead(), intervalMs);
    this.timer.unref();
    return this.tryLead();
  }

  /** Stop trying, and give the lead up (another server takes it at its next try). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.trying?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    if (this.leading) await client.query('SELECT pg_advisory_unlock($1)', [this.key]).catch(() => undefined);
    await client.end().catch(() => undefined);
    this.set(false);
  }
}
