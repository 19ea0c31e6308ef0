// `npm run bench -- s3` runs this in its own process: the least a server can do to serve a bucket's object.
import { S3Driver } from '../src/storage/s3.ts';
import { testS3DriverOptions } from '../test/helpers/s3-options.ts';

/**
 * `bun bench/s3-relay.ts <endpoint> <prefix>`: GET /<key> answers the object's bytes as the S3 driver
 * reads them, untouched (no decryption, no routes, no database). Prints its port.
 */
const [endpoint, prefix] = process.argv.slice(2) as [string, string];
const driver = new S3Driver(testS3DriverOptions(endpoint, prefix));
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: async (req) => new Response(await driver.get(new URL(req.url).pathname.slice(1))),
});
console.log(server.port);
