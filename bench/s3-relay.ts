// `npm run bench -- s3` runs this in its own process: the least a server can do to serve a bucket's object.
import os from 'node:os';
import path from 'node:path';
import { S3Driver } from '../src/storage/s3.ts';

/**
 * `bun bench/s3-relay.ts <endpoint> <prefix>`: GET /<key> answers the object's bytes as the S3 driver
 * reads them, untouched (no decryption, no routes, no database). Prints its port.
 */
const [endpoint, prefix] = process.argv.slice(2) as [string, string];
const driver = new S3Driver({
  bucket: 'coffer-test',
  endpoint,
  region: 'us-east-1',
  prefix,
  accessKeyId: 'S3RVER',
  secretAccessKey: 'S3RVER',
  forcePathStyle: true,
  // Never used: only resumable uploads stage.
  stagingDir: path.join(os.tmpdir(), 'coffer-unused-staging'),
});
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: async (req) => new Response(await driver.get(new URL(req.url).pathname.slice(1))),
});
console.log(server.port);
