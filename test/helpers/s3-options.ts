import os from 'node:os';
import path from 'node:path';
import type { S3DriverOptions } from '../../src/storage/s3.ts';

/** The bucket every test S3 server (s3rver) is started with, and the credentials it accepts. */
export const TEST_BUCKET = 'coffer-test';
export const TEST_ACCESS_KEY = 'S3RVER';

/** An S3 driver's options for the test bucket at `endpoint`, under `prefix`. */
export function testS3DriverOptions(endpoint: string, prefix: string): S3DriverOptions {
  return {
    bucket: TEST_BUCKET,
    endpoint,
    region: 'us-east-1',
    prefix,
    accessKeyId: TEST_ACCESS_KEY,
    secretAccessKey: TEST_ACCESS_KEY,
    forcePathStyle: true,
    // Never used: only resumable uploads stage.
    stagingDir: path.join(os.tmpdir(), 'coffer-unused-staging'),
  };
}

/** The environment that points Coffer at the test bucket at `endpoint`, under `prefix`. */
export function testS3Env(endpoint: string, prefix: string): Record<string, string> {
  return {
    COFFER_STORAGE: 's3',
    S3_ENDPOINT: endpoint,
    S3_BUCKET: TEST_BUCKET,
    S3_PREFIX: prefix,
    S3_ACCESS_KEY_ID: TEST_ACCESS_KEY,
    S3_SECRET_ACCESS_KEY: TEST_ACCESS_KEY,
  };
}
