import { randomBytes } from 'node:crypto';
import { InvalidStorageKeyError } from './driver.ts';

// Flat keys of URL-safe characters: no separators, dots or empty names, so nothing can leave the root.
const KEY_PATTERN = /^[A-Za-z0-9_-]{16,128}$/;

export function isValidStorageKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

export function assertValidStorageKey(key: string): void {
  if (typeof key !== 'string' || !KEY_PATTERN.test(key)) throw new InvalidStorageKeyError(String(key));
}

// The local driver's second shard level (`<k0k1>/<k2k3>/<key>`) of every new key: new objects share 4,096 folders, each
// made and synced once, where a random pair put nearly every object in a folder of its own (a mkdir and a third fsync).
const SHARD_TAIL = '00';
// New keys share their random first two characters 64 at a time: the uploads in progress then write into one
// folder of the local store and share its syncs (LocalDriver); over many keys the folders still fill evenly.
const KEYS_PER_SHARD = 64;
let shard = '';
let shardKeysLeft = 0;

/** A fresh random object key (base64url; 168 random bits after its shard folder, whose two characters are random too). */
export function newStorageKey(): string {
  const key = randomBytes(24).toString('base64url');
  if (shardKeysLeft === 0) {
    shard = key.slice(0, 2);
    shardKeysLeft = KEYS_PER_SHARD;
  }
  shardKeysLeft--;
  return shard + SHARD_TAIL + key.slice(4);
}

/** The object key of a file's thumbnail (`small` or `large`): beside the file's own object, whose key it extends. */
export function thumbnailKey(storageKey: string, size: string): string {
  return `${storageKey}_thumb_${size}`;
}

/** The key of the object whose existence an object depends on: a thumbnail's file, else the key itself. */
export function ownerKeyOf(key: string): string {
  return /^(.+)_thumb_(?:small|large)$/.exec(key)?.[1] ?? key;
}
