import { secretText, type S3Config, type StorageConfig } from '../config.ts';
import { StartupError } from '../errors.ts';
import type { StorageDriver, StorageLocation } from './driver.ts';
import { createLocalDriver, stagingDirOf } from './local.ts';
import { describeAccessFailure, S3Driver } from './s3.ts';

/** The driver a configuration names; `blobs` is the local driver's root. */
export function createDriver(storage: StorageConfig, blobs: string): StorageDriver {
  return storage.driver === 's3' ? createS3Driver(storage, stagingDirOf(blobs)) : createLocalDriver(blobs);
}

function createS3Driver(c: S3Config, stagingDir: string): S3Driver {
  return new S3Driver({ ...c, secretAccessKey: secretText(c.secretAccessKey, 'S3_SECRET_ACCESS_KEY_FILE'), stagingDir });
}

/** Proves the storage answers before the server takes requests: a bucket problem is one line naming the setting. */
export async function verifyDriver(driver: StorageDriver): Promise<void> {
  if (!(driver instanceof S3Driver)) return;
  try {
    await driver.verifyAccess();
  } catch (err) {
    throw new StartupError(describeAccessFailure(err, driver.opts));
  }
}

export function sameLocation(a: StorageLocation, b: StorageLocation): boolean {
  return a.driver === b.driver && (a.bucket ?? null) === (b.bucket ?? null) && a.prefix === b.prefix;
}

/** `local disk` or `bucket "b" under prefix "p/"`, for messages. */
export function describeLocation(l: StorageLocation): string {
  if (l.driver === 'local') return 'local disk';
  return `S3 bucket "${l.bucket}"${l.prefix ? ` under prefix "${l.prefix}"` : ''}`;
}
