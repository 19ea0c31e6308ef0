import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Server } from 'node:http';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { StorageDriver } from '../../src/storage/driver.ts';
import { LocalDriver } from '../../src/storage/local.ts';
import type { S3Driver } from '../../src/storage/s3.ts';
import { TEST_ACCESS_KEY, TEST_BUCKET, testS3Env } from './s3-options.ts';
import { tempDir } from './run-root.ts';

/**
 * A real S3 server on a random loopback port: npm `s3rver` (filesystem-backed, speaks the S3 REST
 * protocol over HTTP), plus what it lacks and Coffer uses, added in front of its routes in the same
 * protocol: ListMultipartUploads, AbortMultipartUpload and UploadPartCopy. ListObjectsV2 is answered here
 * too: s3rver's pages in directory order rather than key order, and its continuation tokens use DES,
 * which the runtime's crypto does not have.
 * It counts the body bytes it serves to GETs and can be told to fail or stall requests.
 */
export interface TestS3 {
  endpoint: string;
  bucket: string;
  dir: string;
  /** Body bytes sent in answer to object GETs since the last reset. */
  bytesServed: number;
  /** Requests seen (method and path with query), in order. */
  requests: string[];
  /** The next `count` requests matching `when` answer `status` with S3 error `code`. */
  failNext(count: number, status: number, code: string, when?: (method: string, url: string) => boolean): void;
  /** Forgets failures and stalls not yet used up. */
  clearFailures(): void;
  /** Requests matching `when` wait `ms` before being served. */
  stall(ms: number, when: (method: string, url: string) => boolean): void;
  /** Object GETs matching `when` send `bytes` of their body, then nothing more (the connection stays open). */
  stopMidBody(bytes: number, when: (method: string, url: string) => boolean): void;
  /** The environment that points Coffer at this bucket under `prefix`. */
  env(prefix?: string): Record<string, string>;
  /** Incomplete multipart uploads (as ListMultipartUploads would list them). */
  incompleteUploads(prefix?: string): Array<{ key: string; uploadId: string }>;
  /** The file holding the bytes of object `key` (for tests that age or damage an object). */
  objectFile(key: string): string;
  /** Every object key under `prefix`. */
  objectKeys(prefix?: string): string[];
  stop(): Promise<void>;
}

const require = createRequire(import.meta.url);
const S3rver = require('s3rver') as new (
  opts: Record<string, unknown>,
) => {
  middleware: Array<(ctx: any, next: () => Promise<void>) => Promise<void>>;
  store: S3rverStore;
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
  httpServer: Server;
};

interface S3rverStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: unknown, md5: string): Promise<void>;
  putObject(object: { bucket: string; key: string; content: Buffer | Readable; metadata: unknown }): Promise<Written>;
  putPart(bucket: string, uploadId: string, partNumber: number, content: Readable): Promise<Written>;
}
type Written = { size: number; md5: string };

/**
 * s3rver answers a PUT (object or part) once it has read the body, before the file is written, and
 * leaves half a file when the body breaks off. A store acknowledges only what it holds: the file is
 * written aside and renamed into place before the answer.
 */
function answerOnceWritten(store: S3rverStore): void {
  const write = async (file: string, content: Buffer | Readable): Promise<Written> => {
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    const aside = `${file}.${randomBytes(4).toString('hex')}.writing`;
    const md5 = new Bun.CryptoHasher('md5');
    let size = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        md5.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    try {
      await pipeline(Buffer.isBuffer(content) ? Readable.from([content]) : content, count, fs.createWriteStream(aside));
      await fs.promises.rename(aside, file);
    } catch (err) {
      await fs.promises.rm(aside, { force: true });
      throw err;
    }
    return { size, md5: md5.digest('hex') };
  };
  store.putObject = async (object) => {
    const written = await write(store.getResourcePath(object.bucket, object.key, 'object'), object.content);
    await store.putMetadata(object.bucket, object.key, object.metadata, written.md5);
    return written;
  };
  store.putPart = async (bucket, uploadId, partNumber, content) => {
    const file = path.join(store.getResourcePath(bucket, undefined, 'uploads'), uploadId, String(partNumber));
    const written = await write(file, content);
    await fs.promises.writeFile(`${file}.md5`, written.md5);
    return written;
  };
}

const UPLOADS = '._S3rver_uploads';
const xmlEscape = (s: string) => s.replace(/[<>&]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;' })[c]!);

/**
 * `plain`: s3rver as it is, without the calls added here, like the small S3 servers that answer
 * ListMultipartUploads and UploadPartCopy with 501 NotImplemented (failures and stalls still apply).
 */
export async function startTestS3(opts: { plain?: boolean } = {}): Promise<TestS3> {
  const dir = tempDir('coffer-s3-');
  const bucket = TEST_BUCKET;
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: !process.env.S3RVER_LOG,
    directory: dir,
    configureBuckets: [{ name: bucket }],
  });
  answerOnceWritten(server.store);
  const failures: Array<{ count: number; status: number; code: string; when: (m: string, u: string) => boolean }> = [];
  const stalls: Array<{ ms: number; when: (m: string, u: string) => boolean }> = [];
  const stops: Array<{ bytes: number; when: (m: string, u: string) => boolean }> = [];
  // stop() ends the stalls still waiting: the server's close waits for every request it holds.
  let endStalls = () => {};
  const stallsEnded = new Promise<void>((resolve) => {
    endStalls = resolve;
  });
  const uploadsDir = path.join(dir, bucket, UPLOADS);
  const objectFile = (key: string) => path.join(dir, bucket, `${key}._S3rver_object`);

  const s3: TestS3 = {
    endpoint: '',
    bucket,
    dir,
    bytesServed: 0,
    requests: [],
    failNext(count, status, code, when = () => true) {
      failures.push({ count, status, code, when });
    },
    clearFailures() {
      failures.length = 0;
      stalls.length = 0;
      stops.length = 0;
    },
    stall(ms, when) {
      stalls.push({ ms, when });
    },
    stopMidBody(bytes, when) {
      stops.push({ bytes, when });
    },
    env(prefix = `i-${randomBytes(4).toString('hex')}/`) {
      return testS3Env(s3.endpoint, prefix);
    },
    incompleteUploads(prefix = '') {
      if (!fs.existsSync(uploadsDir)) return [];
      return (
        fs
          .readdirSync(uploadsDir)
          // A part that was still arriving when its upload was aborted can leave a directory without `key` behind.
          .filter((uploadId) => fs.existsSync(path.join(uploadsDir, uploadId, 'key')))
          .map((uploadId) => ({ uploadId, key: fs.readFileSync(path.join(uploadsDir, uploadId, 'key'), 'utf8') }))
          .filter((u) => u.key.startsWith(prefix))
      );
    },
    objectFile,
    objectKeys(prefix = '') {
      const out: string[] = [];
      const walk = (d: string) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
          if (e.name === UPLOADS) continue;
          const p = path.join(d, e.name);
          if (e.isDirectory()) walk(p);
          else if (e.name.endsWith('._S3rver_object'))
            out.push(path.relative(path.join(dir, bucket), p).slice(0, -'._S3rver_object'.length));
        }
      };
      walk(path.join(dir, bucket));
      return out.filter((k) => k.startsWith(prefix)).sort();
    },
    async stop() {
      endStalls();
      const closed = server.close();
      // A request a stall held may wait for a body its client (a stopped server) never sends: 6 s before the close ended.
      server.httpServer.closeAllConnections();
      await closed;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };

  server.middleware.unshift(async (ctx, next) => {
    const method: string = ctx.method;
    const url: string = ctx.url;
    s3.requests.push(`${method} ${url}`);
    const stall = stalls.find((s) => s.when(method, url));
    // A bucket that answers late: the stall is what is simulated.
    if (stall) await Promise.race([Bun.sleep(stall.ms), stallsEnded]);
    const failure = failures.find((f) => f.count > 0 && f.when(method, url));
    if (failure) {
      failure.count--;
      ctx.status = failure.status;
      ctx.type = 'application/xml';
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${failure.code}</Code><Message>injected by the test</Message></Error>`;
      return;
    }
    if (opts.plain) return next();
    // Its own check comes after the routes answered here: every request is checked here first.
    const accessKey = /Credential=([^/]+)\//.exec(ctx.get('authorization'))?.[1];
    if (accessKey !== TEST_ACCESS_KEY) {
      ctx.status = 403;
      ctx.type = 'application/xml';
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InvalidAccessKeyId</Code><Message>The AWS Access Key Id you provided does not exist in our records.</Message></Error>`;
      return;
    }
    const [, bucketName, ...rest] = (ctx.path as string).split('/');
    const key = decodeURIComponent(rest.join('/'));
    const q = ctx.query as Record<string, string>;
    if (bucketName === bucket && method === 'GET' && !key && 'uploads' in q) {
      const prefix = q.prefix ?? '';
      const uploads = s3.incompleteUploads(prefix).map((u) => ({ ...u, initiated: fs.statSync(path.join(uploadsDir, u.uploadId)).mtime }));
      ctx.type = 'application/xml';
      ctx.body =
        `<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult><Bucket>${bucket}</Bucket><Prefix>${xmlEscape(prefix)}</Prefix><IsTruncated>false</IsTruncated>` +
        uploads
          .map(
            (u) =>
              `<Upload><Key>${xmlEscape(u.key)}</Key><UploadId>${u.uploadId}</UploadId><Initiated>${u.initiated.toISOString()}</Initiated></Upload>`,
          )
          .join('') +
        '</ListMultipartUploadsResult>';
      return;
    }
    if (bucketName === bucket && method === 'GET' && !key && q['list-type'] === '2') {
      const prefix = q.prefix ?? '';
      const after = q['continuation-token'] ? Buffer.from(q['continuation-token'], 'base64url').toString() : (q['start-after'] ?? '');
      const max = Math.min(1000, Number(q['max-keys'] ?? 1000));
      const keys = s3.objectKeys(prefix).filter((k) => k > after);
      const page = keys.slice(0, max);
      const truncated = keys.length > max;
      const entry = (k: string) => {
        const file = objectFile(k);
        const st = fs.statSync(file);
        const md5 = fs.existsSync(`${file}.md5`) ? fs.readFileSync(`${file}.md5`, 'utf8') : '';
        return `<Contents><Key>${xmlEscape(k)}</Key><LastModified>${st.mtime.toISOString()}</LastModified><ETag>"${md5}"</ETag><Size>${st.size}</Size><StorageClass>STANDARD</StorageClass></Contents>`;
      };
      ctx.type = 'application/xml';
      ctx.body =
        `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult><Name>${bucket}</Name><Prefix>${xmlEscape(prefix)}</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>${max}</MaxKeys><IsTruncated>${truncated}</IsTruncated>` +
        (truncated ? `<NextContinuationToken>${Buffer.from(page.at(-1)!).toString('base64url')}</NextContinuationToken>` : '') +
        page.map(entry).join('') +
        '</ListBucketResult>';
      return;
    }
    const uploadGone = () => !fs.existsSync(path.join(uploadsDir, path.basename(q.uploadId!), 'key'));
    if (bucketName === bucket && key && 'uploadId' in q && (method === 'DELETE' || uploadGone())) {
      const d = path.join(uploadsDir, path.basename(q.uploadId!));
      if (uploadGone()) {
        ctx.status = 404;
        ctx.type = 'application/xml';
        ctx.body =
          '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>';
        return;
      }
      fs.rmSync(d, { recursive: true, force: true });
      ctx.status = 204;
      return;
    }
    if (bucketName === bucket && key && 'uploadId' in q && method === 'PUT' && ctx.get('x-amz-copy-source')) {
      const source = decodeURIComponent(ctx.get('x-amz-copy-source')).replace(/^\/?[^/]+\//, '');
      const [, start, end] = /^bytes=(\d+)-(\d+)$/.exec(ctx.get('x-amz-copy-source-range'))!;
      const bytes = fs.readFileSync(objectFile(source)).subarray(Number(start), Number(end) + 1);
      const part = path.join(uploadsDir, path.basename(q.uploadId!), String(Number(q.partNumber)));
      const md5 = new Bun.CryptoHasher('md5').update(bytes).digest('hex');
      fs.writeFileSync(part, bytes);
      fs.writeFileSync(`${part}.md5`, md5);
      ctx.type = 'application/xml';
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<CopyPartResult><ETag>"${md5}"</ETag><LastModified>${new Date().toISOString()}</LastModified></CopyPartResult>`;
      return;
    }
    await next();
    if (method === 'GET' && key && ctx.body && typeof ctx.body.pipe === 'function') {
      const length = ctx.length;
      let budget = stops.find((s) => s.when(method, url))?.bytes ?? Infinity;
      ctx.body = ctx.body.pipe(
        new Transform({
          transform(chunk: Buffer, _enc, done) {
            const sent = chunk.subarray(0, Math.max(0, budget));
            budget -= sent.length;
            s3.bytesServed += sent.length;
            if (sent.length < chunk.length) this.push(sent);
            // Past the budget the callback never comes: the body stops mid-way and the connection stays open.
            else done(null, chunk);
          },
        }),
      );
      if (length !== undefined) ctx.length = length;
    }
  });
  const { port } = await server.run();
  s3.endpoint = `http://127.0.0.1:${port}`;
  running.set(s3.endpoint, s3);
  return s3;
}

const running = new Map<string, TestS3>();

/** The test S3 server a driver talks to. */
export function testS3Of(driver: S3Driver): TestS3 {
  const server = running.get(driver.opts.endpoint ?? '');
  if (!server) throw new Error('this S3 driver does not talk to a test S3 server');
  return server;
}

/** The file holding object `key` of a context's storage: in the data dir (local) or in the test S3 server's directory. */
export function objectFileOf(driver: StorageDriver, key: string): string {
  if (driver instanceof LocalDriver) return driver.pathOf(key);
  const s3 = driver as S3Driver;
  return testS3Of(s3).objectFile(s3.opts.prefix + key);
}

/** Writes object `key` straight into the driver's (or the test S3 server's) files, with `mtime`: many objects fast. */
export function writeObjectFile(driver: StorageDriver, key: string, bytes: string | Uint8Array, mtime: Date): void {
  const file = objectFileOf(driver, key);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, bytes);
  // s3rver computes a missing ETag on the next listing, a file open per object at once.
  if (!(driver instanceof LocalDriver)) fs.writeFileSync(`${file}.md5`, new Bun.CryptoHasher('md5').update(bytes).digest('hex'));
  fs.utimesSync(file, mtime, mtime);
}

/** The driver the parametrised suites run on: COFFER_STORAGE=s3 runs them a second time against the test S3 server. */
export const suiteStorage: 'local' | 's3' = process.env.COFFER_STORAGE === 's3' ? 's3' : 'local';

let shared: Promise<TestS3> | null = null;

/** One server for every test server of this process that runs on S3 (each gets its own prefix). */
export function sharedTestS3(): Promise<TestS3> {
  shared ??= startTestS3();
  return shared;
}
