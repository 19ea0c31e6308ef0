import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { type ReplicaDestination, secretText } from '../../config.ts';
import { StorageCallNotImplementedError } from '../../storage/driver.ts';
import { S3Driver } from '../../storage/s3.ts';

/** Where a replica's objects go: the same flat names in a directory or under a bucket prefix. */
export interface ReplicaStore {
  /** `s3://bucket/prefix` or the directory, for messages. */
  readonly where: string;
  /**
   * Copies a local file in; the object appears whole or not at all. Only `begins` (the first object of a
   * generation, and its fence) may create a directory that is not there.
   */
  putFile(name: string, file: string, opts?: { begins?: boolean }): Promise<void>;
  putBytes(name: string, data: Uint8Array, opts?: { begins?: boolean }): Promise<void>;
  /** The object's bytes, or null when there is no such object. */
  get(name: string): Promise<AsyncIterable<Uint8Array> | null>;
  getBytes(name: string): Promise<Uint8Array | null>;
  /** The objects, or with `startAfter` only those whose names sort after it. */
  list(startAfter?: string): Promise<Array<{ name: string; size: number }>>;
  delete(name: string): Promise<void>;
  /**
   * Removes what a write cut off by a crash left at the destination, begun before `before` (ms) and not being
   * written by this process: a directory's hidden partial file, a bucket's incomplete multipart upload. Answers how many.
   */
  sweepInterrupted(before: number): Promise<number>;
}

// A write in progress holds its object aside under this name, hidden from list(), until it is renamed into place.
const PARTIAL = /^\..+\.\d+\.partial$/;

class DirectoryStore implements ReplicaStore {
  /** The partial files this process is writing now. */
  private readonly writing = new Set<string>();

  constructor(private readonly dir: string) {}

  get where(): string {
    return this.dir;
  }

  private async place(name: string, write: (aside: string) => Promise<void>, begins = false): Promise<void> {
    if (begins) await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 });
    // Gone mid-generation (a share unmounted): made again here, it would take the segments the replica then lacks.
    else if (!fs.existsSync(this.dir))
      throw new Error(`the directory ${this.dir} is gone (an unmounted share?); changes wait on disk until it is back`);
    const aside = path.join(this.dir, `.${name}.${process.pid}.partial`);
    this.writing.add(aside);
    try {
      await write(aside);
      const handle = await fsp.open(aside, 'r');
      await handle.sync();
      await handle.close();
      await fsp.rename(aside, path.join(this.dir, name));
      const dir = await fsp.open(this.dir, 'r');
      await dir.sync();
      await dir.close();
    } finally {
      await fsp.rm(aside, { force: true });
      this.writing.delete(aside);
    }
  }

  putFile(name: string, file: string, opts: { begins?: boolean } = {}): Promise<void> {
    return this.place(name, (aside) => fsp.copyFile(file, aside), opts.begins);
  }

  putBytes(name: string, data: Uint8Array, opts: { begins?: boolean } = {}): Promise<void> {
    return this.place(name, (aside) => fsp.writeFile(aside, data, { mode: 0o600 }), opts.begins);
  }

  async get(name: string): Promise<AsyncIterable<Uint8Array> | null> {
    const file = path.join(this.dir, name);
    return fs.existsSync(file) ? Bun.file(file).stream() : null;
  }

  async getBytes(name: string): Promise<Uint8Array | null> {
    const file = path.join(this.dir, name);
    return fs.existsSync(file) ? new Uint8Array(await Bun.file(file).arrayBuffer()) : null;
  }

  async list(startAfter = ''): Promise<Array<{ name: string; size: number }>> {
    if (!fs.existsSync(this.dir)) return [];
    const out: Array<{ name: string; size: number }> = [];
    for (const name of await fsp.readdir(this.dir)) {
      if (name.startsWith('.') || name <= startAfter) continue;
      const st = await fsp.stat(path.join(this.dir, name));
      if (st.isFile()) out.push({ name, size: st.size });
    }
    return out;
  }

  async delete(name: string): Promise<void> {
    await fsp.rm(path.join(this.dir, name), { force: true });
  }

  async sweepInterrupted(before: number): Promise<number> {
    if (!fs.existsSync(this.dir)) return 0;
    let removed = 0;
    for (const name of await fsp.readdir(this.dir)) {
      const file = path.join(this.dir, name);
      if (!PARTIAL.test(name) || this.writing.has(file)) continue;
      const st = await fsp.stat(file).catch(() => null);
      if (!st?.isFile() || st.mtimeMs >= before) continue;
      await fsp.rm(file, { force: true });
      removed++;
    }
    return removed;
  }
}

class BucketStore implements ReplicaStore {
  /** The objects this process is uploading now (a multipart upload of one is incomplete until it ends). */
  private readonly writing = new Set<string>();

  constructor(private readonly driver: S3Driver) {}

  get where(): string {
    const o = this.driver.opts;
    return `s3://${o.bucket}/${o.prefix}`;
  }

  async putFile(name: string, file: string): Promise<void> {
    this.writing.add(name);
    try {
      await this.driver.put(name, Bun.file(file).stream());
    } finally {
      this.writing.delete(name);
    }
  }

  async putBytes(name: string, data: Uint8Array): Promise<void> {
    await this.driver.put(
      name,
      (async function* () {
        yield data;
      })(),
    );
  }

  async get(name: string): Promise<AsyncIterable<Uint8Array> | null> {
    if ((await this.driver.head(name)) === null) return null;
    return this.driver.get(name);
  }

  async getBytes(name: string): Promise<Uint8Array | null> {
    const body = await this.get(name);
    return body ? new Uint8Array(await new Response(body as ReadableStream<Uint8Array>).arrayBuffer()) : null;
  }

  async list(startAfter?: string): Promise<Array<{ name: string; size: number }>> {
    const out: Array<{ name: string; size: number }> = [];
    for await (const o of this.driver.list({ startAfter })) out.push({ name: o.key, size: o.size });
    return out;
  }

  async delete(name: string): Promise<void> {
    await this.driver.delete(name);
  }

  async sweepInterrupted(before: number): Promise<number> {
    let removed = 0;
    try {
      for await (const u of this.driver.listIncompleteUploads()) {
        if (u.initiated.getTime() >= before || this.writing.has(u.key)) continue;
        if (await this.driver.abortIncompleteUpload(u.key, u.uploadId)) removed++;
      }
    } catch (err) {
      // A store without ListMultipartUploads: its parts are its own lifecycle rule's to expire.
      if (!(err instanceof StorageCallNotImplementedError)) throw err;
    }
    return removed;
  }
}

/** The store a destination names; `stagingDir` is the bucket client's (unused: replicas are written whole). */
export function replicaStore(destination: ReplicaDestination, stagingDir: string): ReplicaStore {
  if (destination.kind === 'dir') return new DirectoryStore(destination.dir);
  const { s3 } = destination;
  return new BucketStore(
    new S3Driver({ ...s3, stagingDir, secretAccessKey: secretText(s3.secretAccessKey, 'BACKUP_S3_SECRET_ACCESS_KEY_FILE') }),
  );
}
