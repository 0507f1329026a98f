/**
 * The one memo for values keyed by what callers send (agent and tool names, tokens, user names, addresses): a map of
 * at most `max` entries that forgets the least recently used ones first, so that a caller sending a new name on every
 * request costs a rebuilt entry, never memory without end (issue 23, "Bounded memory").
 *
 * Two generations rather than a linked list: entries go into `young`; when it holds max/2 of them it becomes `old` and
 * the previous `old` is dropped whole; a hit in `old` moves the entry back into `young`. So every entry used (read or
 * written) within the last max/2 insertions is kept, at most `max` are held, and a hit in `young` (the common case on a
 * hot path: the engine's memos are read on every decision) is a single Map lookup, without the reordering a strict LRU
 * does on every read.
 *
 * Values may be null but not undefined: undefined is the answer for "not here".
 */
export class BoundedCache<K, V extends NonNullable<unknown> | null> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  /** entries per generation: max/2, rounded down */
  private readonly half: number;

  constructor(
    /** the most entries held at once (2 or more) */
    readonly max: number,
  ) {
    if (!Number.isInteger(max) || max < 2) throw new RangeError(`A BoundedCache holds at least 2 entries, not ${max}.`);
    this.half = Math.floor(max / 2);
  }

  /** The value kept for `key`, or undefined; a hit counts as a use (the entry is kept longer). */
  get(key: K): V | undefined {
    const hit = this.young.get(key);
    if (hit !== undefined || this.old.size === 0) return hit;
    const aged = this.old.get(key);
    if (aged !== undefined) {
      this.old.delete(key);
      this.insert(key, aged);
    }
    return aged;
  }

  has(key: K): boolean {
    return this.young.has(key) || this.old.has(key);
  }

  set(key: K, value: V): this {
    if (this.young.has(key)) this.young.set(key, value);
    else {
      this.old.delete(key);
      this.insert(key, value);
    }
    return this;
  }

  /** The value kept for `key`, else `make(key)`, kept. */
  getOrSet(key: K, make: (key: K) => V): V {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const made = make(key);
    this.insert(key, made);
    return made;
  }

  delete(key: K): boolean {
    const a = this.young.delete(key);
    const b = this.old.delete(key);
    return a || b;
  }

  clear(): void {
    this.young = new Map();
    this.old = new Map();
  }

  /** entries held now (never more than max) */
  get size(): number {
    return this.young.size + this.old.size;
  }

  /** Every entry held, most recently inserted last within each generation (tests, pruning by value). */
  *entries(): IterableIterator<[K, V]> {
    yield* this.old;
    yield* this.young;
  }

  /** A key that is in neither generation. */
  private insert(key: K, value: V): void {
    if (this.young.size >= this.half) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }
}

/**
 * BoundedCache for values keyed by two names (an agent and a tool, a tool and an agent), with the same two generations
 * and the same bound on the entries of both together. Nested maps rather than one key made of both: joining the names
 * into a new string and hashing it on every lookup cost about four times the two lookups of a hit (measured: ~190 ns
 * against ~50 ns), and these memos are read on every decision.
 */
export class BoundedPairCache<V extends NonNullable<unknown> | null> {
  private young = new Map<string, Map<string, V>>();
  private old = new Map<string, Map<string, V>>();
  private youngSize = 0;
  private oldSize = 0;
  private readonly half: number;

  constructor(
    /** the most entries held at once (2 or more) */
    readonly max: number,
  ) {
    if (!Number.isInteger(max) || max < 2) throw new RangeError(`A BoundedPairCache holds at least 2 entries, not ${max}.`);
    this.half = Math.floor(max / 2);
  }

  /** The value kept for (first, second), or undefined; a hit counts as a use. */
  get(first: string, second: string): V | undefined {
    const hit = this.young.get(first)?.get(second);
    if (hit !== undefined || this.oldSize === 0) return hit;
    const inner = this.old.get(first);
    const aged = inner?.get(second);
    if (aged !== undefined) {
      inner!.delete(second);
      this.oldSize--;
      this.insert(first, second, aged);
    }
    return aged;
  }

  set(first: string, second: string, value: V): this {
    const inner = this.young.get(first);
    if (inner?.has(second)) inner.set(second, value);
    else {
      const aged = this.old.get(first);
      if (aged?.delete(second)) this.oldSize--;
      this.insert(first, second, value);
    }
    return this;
  }

  clear(): void {
    this.young = new Map();
    this.old = new Map();
    this.youngSize = 0;
    this.oldSize = 0;
  }

  /** entries held now (never more than max) */
  get size(): number {
    return this.youngSize + this.oldSize;
  }

  /** A pair that is in neither generation. */
  private insert(first: string, second: string, value: V): void {
    if (this.youngSize >= this.half) {
      this.old = this.young;
      this.oldSize = this.youngSize;
      this.young = new Map();
      this.youngSize = 0;
    }
    let inner = this.young.get(first);
    if (inner === undefined) this.young.set(first, (inner = new Map()));
    inner.set(second, value);
    this.youngSize++;
  }
}
