import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { S3Driver } from '../../../src/storage/s3.ts';
import { json } from '../../helpers/client.ts';
import { parseJson, runCli } from '../../helpers/cli.ts';
import { startTestS3, type TestS3 } from '../../helpers/s3.ts';
import { testS3DriverOptions } from '../../helpers/s3-options.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { DAY, storeFile, strayObject } from '../../helpers/stored-files.ts';

const MiB = 1024 * 1024;
let s3: TestS3;
let t: TestServer;
let admin: seed.SeededLogin;
let stray: string;
const prefix = `plain-${randomBytes(3).toString('hex')}/`;
const listingUploads = () => s3.requests.filter((r) => r.startsWith('GET') && /[?&]uploads(&|=|$)/.test(r)).length;

beforeAll(async () => {
  s3 = await startTestS3({ plain: true });
  t = await startTestServer({ env: s3.env(prefix), startWorker: false });
  admin = await seed.admin(t);
  await storeFile(t.server.ctx, admin.id, { createdAt: Date.now() - 3 * DAY });
  stray = await strayObject(t.server.ctx, { ageMs: 2 * DAY });
});
afterAll(async () => {
  await t?.stop();
  await s3?.stop();
});

describe('a store without the optional S3 calls (plain s3rver: 501 NotImplemented to ListMultipartUploads and UploadPartCopy)', () => {
  test('Admin → Orphans: the scan reports the objects and says incomplete multipart uploads could not be listed, asking once', async () => {
    const asked = listingUploads();
    const start = await admin.client.get('/api/user/orphans');
    expect(start.status).toBe(202);
    const { jobId } = await json(start);
    await t.server.worker.drain();
    const done = await admin.client.get(`/api/user/orphans?jobId=${jobId}`);
    expect(done.status).toBe(200);
    const report = await json(done);
    expect(report.storageOrphans.items.map((o: { key: string }) => o.key)).toEqual([stray]);
    expect(report.totals.storedObjects).toBe(2);
    expect(report.incompleteUploadsUnlisted).toContain('501 NotImplemented');
    // The same answer however often asked: not retried.
    expect(listingUploads() - asked).toBe(1);
  });

  test('coffer orphans scan finishes (exit 0) with the objects and the sentence; --json carries the field', async () => {
    const env = s3.env(prefix);
    const r = await runCli(['orphans', 'scan', '--json', '--data-dir', t.dataDir], { env });
    expect(r.code).toBe(0);
    const report = parseJson(r);
    expect(report.storageOrphans.items.map((o: { key: string }) => o.key)).toEqual([stray]);
    expect(report.incompleteUploadsUnlisted).toContain('501 NotImplemented');
    const human = await runCli(['orphans', 'scan', '--data-dir', t.dataDir], { env });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(stray);
    expect(human.stdout).toContain('Incomplete multipart uploads could not be listed on this store');
  });

  test('a copy over the part-copy threshold goes through Coffer once UploadPartCopy is refused, and straight through after', async () => {
    // The 5 GiB threshold made small, so 12 MiB would be copied by UploadPartCopy (parts of 5 MiB).
    const driver = new S3Driver({ ...testS3DriverOptions(s3.endpoint, `copy-${prefix}`), copyPartThreshold: MiB, copyPartSize: 5 * MiB });
    const key = (c: string) => c.repeat(32);
    const content = randomBytes(12 * MiB + 17);
    await driver.put(
      key('A'),
      (async function* () {
        yield content;
      })(),
    );
    const begun = () => s3.requests.filter((r) => r.startsWith('POST') && r.includes('?uploads')).length;
    let before = begun();
    await driver.copy(key('A'), key('B'));
    expect(Buffer.from(await new Response(await driver.get(key('B'))).arrayBuffer()).equals(content)).toBe(true);
    // One multipart upload for the refused part copy, one for the copy through Coffer.
    expect(begun() - before).toBe(2);
    before = begun();
    await driver.copy(key('A'), key('C'));
    expect(begun() - before).toBe(1);
    expect(Buffer.from(await new Response(await driver.get(key('C'))).arrayBuffer()).equals(content)).toBe(true);
  });
});
