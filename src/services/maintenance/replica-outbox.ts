import fs from 'node:fs';
import path from 'node:path';
import { parseObjectName } from './replica-format.ts';

const KIND_ORDER = { descriptor: 0, secrets: 1, snapshot: 2, wal: 3 } as const;

/**
 * The sealed objects waiting on disk for the replica destination, in the order a restore needs them (by
 * generation, then descriptor, secrets, snapshot, segments), with their sizes. The directory is listed once,
 * at the start; afterwards each object is counted as it comes and goes, so a round costs the same however
 * long the destination has been away.
 */
export class ReplicaOutbox {
  /** Name to bytes, in sending order: objects arrive in it (a generation's, then the next's). */
  private readonly waiting = new Map<string, number>();
  private total = 0;
  private segments = 0;

  constructor(readonly dir: string) {}

  /** What the directory holds now (left by an earlier run, or seen from beside the server). */
  load(): this {
    this.waiting.clear();
    this.total = 0;
    this.segments = 0;
    const entries = fs.existsSync(this.dir) ? fs.readdirSync(this.dir).filter((n) => !n.startsWith('.')) : [];
    const objects = entries
      .map((name) => ({ name, o: parseObjectName(name) }))
      .filter((e) => e.o !== null)
      .sort((a, b) => {
        if (a.o!.generation !== b.o!.generation) return a.o!.generation < b.o!.generation ? -1 : 1;
        if (a.o!.kind !== b.o!.kind) return KIND_ORDER[a.o!.kind] - KIND_ORDER[b.o!.kind];
        return a.o!.kind === 'wal' && b.o!.kind === 'wal' ? a.o!.index - b.o!.index : 0;
      });
    for (const { name } of objects) this.add(name, fs.statSync(path.join(this.dir, name), { throwIfNoEntry: false })?.size ?? 0);
    return this;
  }

  /** An object just moved into the directory: it goes out after every one before it. */
  add(name: string, bytes: number): void {
    this.count(name, -(this.waiting.get(name) ?? 0));
    this.waiting.set(name, bytes);
    this.count(name, bytes);
  }

  /** Sent: the object leaves the directory. */
  remove(name: string): void {
    const bytes = this.waiting.get(name);
    if (bytes === undefined) return;
    this.waiting.delete(name);
    this.count(name, -bytes);
    fs.rmSync(path.join(this.dir, name), { force: true });
  }

  /** Empties the directory, half-written objects beside it included. */
  clear(): void {
    this.waiting.clear();
    this.total = 0;
    this.segments = 0;
    for (const name of fs.readdirSync(this.dir)) fs.rmSync(path.join(this.dir, name), { force: true });
  }

  /** The waiting names in sending order; one that arrives while they are walked is reached too. */
  names(): IterableIterator<string> {
    return this.waiting.keys();
  }

  bytes(): number {
    return this.total;
  }

  segmentBytes(): number {
    return this.segments;
  }

  sizeOf(name: string): number {
    return this.waiting.get(name) ?? 0;
  }

  /** When the oldest waiting segment was written, or null when none waits: only generations' first objects come before it. */
  oldestSegmentAt(): number | null {
    for (const name of this.waiting.keys()) {
      const o = parseObjectName(name);
      if (o?.kind === 'wal') return o.at;
    }
    return null;
  }

  private count(name: string, bytes: number): void {
    this.total += bytes;
    if (parseObjectName(name)?.kind === 'wal') this.segments += bytes;
  }
}
