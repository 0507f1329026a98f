/**
 * A configuration file that is parsed once, re-read when it changes, and never replaced by a broken version: a
 * malformed or half-written file keeps the last good configuration in force and records why.
 */
import { readFileSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { messageOf } from '@/lib/errors';

/** The file as a person finds it: relative to the working directory when inside it, else absolute. */
export function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel.startsWith('..') || rel === '' ? path : rel;
}

export interface WatchedFileStatus {
  path: string;
  loadedAt: number | null;
  /** the error that kept the last good version in force, if the newest version could not be used */
  error: string | null;
  missing: boolean;
  /** under change control: the version in force is the active revision's, not the file on disk */
  pinned: boolean;
  /** pinned, and the file on disk differs from the version in force (it is not loaded) */
  drift: boolean;
}

/** A file's status as the API answers it (snake_case, like the rest of the JSON). */
export function fileStatusJson(s: WatchedFileStatus) {
  return { path: s.path, loaded_at: s.loadedAt, error: s.error, missing: s.missing, pinned: s.pinned, drift: s.drift };
}

export class WatchedFile<T> {
  private value: T;
  private source: string | null = null;
  private stamp = '';
  private loadedAt: number | null = null;
  private error: string | null = null;
  private missing = false;
  private timer: NodeJS.Timeout | undefined;
  private acceptor: ((next: T) => void) | undefined;
  private refusedListener: ((error: string) => void) | undefined;
  private loadedListener: (() => void) | undefined;
  /** under change control: the text in force comes from the active revision (null: the revision has no such file) */
  private pinnedText: string | null | undefined;
  private drifted = false;
  private driftListener: ((disk: string | null) => void) | undefined;

  /**
   * Loads the file now. A file that exists but does not parse throws: a process must not start on a broken policy.
   * A missing file gives `whenMissing`.
   */
  constructor(
    readonly path: string,
    /** `origin`: the file on this server's disk, or the active revision's text (from the database) */
    private readonly parse: (text: string, file: string, origin: 'disk' | 'revision') => T,
    private readonly whenMissing: T,
  ) {
    this.value = whenMissing;
    const stamp = this.readStamp();
    if (stamp === null) {
      this.missing = true;
      this.loadedAt = Date.now() / 1000;
      return;
    }
    const text = readFileSync(path, 'utf8');
    this.value = this.parse(text, displayPath(path), 'disk');
    this.source = text;
    this.stamp = stamp;
    this.loadedAt = Date.now() / 1000;
  }

  get current(): T {
    return this.value;
  }

  /** The text of the version in force (null when the file is missing): what a policy revision keeps. */
  get text(): string | null {
    return this.source;
  }

  /**
   * A further check a new version must pass before it takes effect (e.g. the policy tests); it throws to refuse.
   * A refused version is handled like a malformed one: the last good version stays, and the error is shown.
   */
  setAcceptor(accept: (next: T) => void): void {
    this.acceptor = accept;
  }

  /** Told of every new version that took effect on a reload. */
  onLoaded(listener: () => void): void {
    this.loadedListener = listener;
  }

  /** Told of every refused version (malformed, or refused by the acceptor), once per change of the file. */
  onRefused(listener: (error: string) => void): void {
    this.refusedListener = listener;
  }

  /** Told when the file on disk changes to a version that differs from the pinned one (once per version of the file). */
  onDrift(listener: (disk: string | null) => void): void {
    this.driftListener = listener;
  }

  status(): WatchedFileStatus {
    return { path: this.path, loadedAt: this.loadedAt, error: this.error, missing: this.missing, pinned: this.pinnedText !== undefined, drift: this.drifted };
  }

  /** Whether the version in force is pinned (change control) rather than read from disk. */
  get isPinned(): boolean {
    return this.pinnedText !== undefined;
  }

  /**
   * Put this text in force instead of the file on disk (change control: the active revision's version; null: the
   * revision has no such file). Parsed like the file (a text that does not parse throws, and the version in force
   * stays); not checked by the acceptor: a proposal's tests were run when it was proposed. From now on the file on
   * disk is only compared with it: a difference is drift, reported, never loaded. Returns true when the text changed.
   */
  pin(text: string | null): boolean {
    if (this.pinnedText !== undefined && this.pinnedText === text) return false;
    const next = text === null ? this.whenMissing : this.parse(text, `${displayPath(this.path)} (the active revision)`, 'revision');
    const changed = text !== this.source;
    this.value = next;
    this.source = text;
    this.pinnedText = text;
    this.loadedAt = Date.now() / 1000;
    this.error = null;
    this.missing = text === null;
    this.stamp = '';
    this.checkDrift();
    return changed;
  }

  /** Compare the file on disk with the pinned text (a new version of the file that differs is told once). */
  private checkDrift(): void {
    const stamp = this.readStamp() ?? 'missing';
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    let disk: string | null = null;
    try {
      disk = stamp === 'missing' ? null : readFileSync(this.path, 'utf8');
    } catch {
      disk = null;
    }
    const drifted = disk !== this.pinnedText;
    this.drifted = drifted;
    if (!drifted) return;
    try {
      this.driftListener?.(disk);
    } catch (listenerError) {
      console.error('Recording a drifted configuration file failed.', listenerError);
    }
  }

  private readStamp(): string | null {
    try {
      const s = statSync(this.path);
      return `${s.mtimeMs}:${s.size}:${s.ino}`;
    } catch {
      return null;
    }
  }

  /** Re-read the file if it changed. Returns true when a new version took effect. */
  reload(force = false): boolean {
    if (this.pinnedText !== undefined) {
      this.checkDrift();
      return false;
    }
    const stamp = this.readStamp();
    if (stamp === null) {
      // A deleted file is treated like a broken one: the last good version stays, and we say so.
      if (!this.missing) this.error = `${this.path} is missing; the last good version stays in force.`;
      return false;
    }
    if (!force && stamp === this.stamp) return false;
    try {
      const text = readFileSync(this.path, 'utf8');
      const next = this.parse(text, displayPath(this.path), 'disk');
      this.acceptor?.(next);
      this.value = next;
      this.source = text;
      this.stamp = stamp;
      this.loadedAt = Date.now() / 1000;
      this.error = null;
      this.missing = false;
      try {
        this.loadedListener?.();
      } catch (listenerError) {
        console.error('Recording a configuration load failed.', listenerError);
      }
      return true;
    } catch (e) {
      this.stamp = stamp;
      this.error = `${messageOf(e)}\nThe last good version stays in force.`;
      try {
        this.refusedListener?.(this.error);
      } catch (listenerError) {
        console.error('Recording a refused configuration failed.', listenerError);
      }
      return false;
    }
  }

  /** Poll for changes (stat only) every `intervalMs`; the timer does not keep the process alive. */
  watch(intervalMs = 1000): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.reload(), intervalMs);
    this.timer.unref();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
