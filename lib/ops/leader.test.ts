/**
 * One leader at a time across servers (two connection pools), on a database of this file's own in the test run's
 * PostgreSQL cluster (the locks counted and cut are this database's: other files' servers lead in theirs): the lead moves
 * when the leader stops or loses its connection, and never to two servers at once.
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { within } from '@/lib/test-support/wait';
import { Leadership, LEADER_LOCKS } from './leader';

const pg15 = usePostgres();
const pools: pg.Pool[] = [];
const pool = () => {
  const p = pg15.pool();
  pools.push(p);
  return p;
};
const until = (check: () => boolean | Promise<boolean>) => within(3_000, check);

describe('leadership (the sweeper and the checkpoint signer run on one server at a time)', () => {
  it('gives the lead to exactly one server, and hands it over when the leader stops', async () => {
    const servers = [pool(), pool(), pool()].map((p) => new Leadership(p, LEADER_LOCKS.sweeper));
    await Promise.all(servers.map((s) => s.start(100)));
    expect(servers.filter((s) => s.isLeader())).toHaveLength(1);
    const leader = servers.find((s) => s.isLeader())!;
    await leader.stop();
    const others = servers.filter((s) => s !== leader);
    await until(() => others.some((s) => s.isLeader()));
    expect(others.filter((s) => s.isLeader())).toHaveLength(1);
    for (const s of others) await s.stop();
  });

  it('moves the lead when the leader loses its connection (as when its server is killed), never to two at once', async () => {
    const aChanges: boolean[] = [];
    const a = new Leadership(pool(), LEADER_LOCKS.checkpoints, (leading) => void aChanges.push(leading));
    const b = new Leadership(pool(), LEADER_LOCKS.checkpoints);
    const held = async () =>
      (
        await pools[0]!.query<{ n: number }>(
          "SELECT count(*)::int8 AS n FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND (l.classid::int8 << 32 | l.objid::int8) = $1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
          [LEADER_LOCKS.checkpoints],
        )
      ).rows[0]!.n;
    try {
      await a.start(100);
      await b.start(100);
      expect([a.isLeader(), b.isLeader()]).toEqual([true, false]);
      // The leader's session ends on the database side: its lock goes with it, and a's next try or b's takes it.
      await pools[0]!.query(
        "SELECT pg_terminate_backend(l.pid) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND (l.classid::int8 << 32 | l.objid::int8) = $1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        [LEADER_LOCKS.checkpoints],
      );
      // First the event: the old leader learns that it lost its session (until then it still believes it leads, and the
      // dying session may still show the lock). Then the lead settles on one server that holds the lock again.
      await until(() => aChanges.includes(false));
      await until(async () => [a, b].filter((s) => s.isLeader()).length === 1 && (await held()) === 1);
      expect([a, b].filter((s) => s.isLeader())).toHaveLength(1);
      // A server that stops for good (its timer gone, its session closed) leaves the lead to the other.
      const leader = a.isLeader() ? a : b;
      const other = leader === a ? b : a;
      await leader.stop();
      await until(() => other.isLeader());
      expect(await held()).toBe(1);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
