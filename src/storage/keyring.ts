import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** A master key and its public id; the id is stored beside everything the key wraps, so rotation knows what to re-wrap. */
export interface MasterKey {
  id: string;
  key: Uint8Array;
}

export class KeyUnavailableError extends Error {}
export class KeyIntegrityError extends Error {}

const KEY_BYTES = 32;
const WRAP_VERSION = 'k1';
const WRAP_AAD = Buffer.from('coffer-wrapped-key-v1');
const SECRET_AAD = Buffer.from('coffer-sealed-secret-v1');

export function generateMasterKey(): Uint8Array {
  return randomBytes(KEY_BYTES);
}

/** Accepts 32 bytes written as base64 (with or without padding, standard or URL-safe) or as hex. */
export function parseMasterKey(text: string): Uint8Array {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) {
    const bytes = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === KEY_BYTES) return bytes;
  }
  throw new Error('expected 32 bytes written as base64 (44 characters) or hex (64 characters)');
}

export function masterKeyFrom(bytes: Uint8Array): MasterKey {
  if (bytes.length !== KEY_BYTES) throw new Error(`a master key is ${KEY_BYTES} bytes, got ${bytes.length}`);
  const id = createHash('sha256').update('coffer-master-key-id').update(bytes).digest('hex').slice(0, 16);
  return { id, key: bytes };
}

function gcmSeal(key: Uint8Array, plain: Uint8Array, aad: Buffer): Buffer {
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, nonce);
  c.setAAD(aad);
  const body = Buffer.concat([c.update(plain), c.final()]);
  return Buffer.concat([nonce, body, c.getAuthTag()]);
}

function gcmOpen(key: Uint8Array, sealed: Buffer, aad: Buffer): Buffer {
  if (sealed.length < 28) throw new KeyIntegrityError('sealed value is too short');
  const d = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
  d.setAAD(aad);
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  try {
    return Buffer.concat([d.update(sealed.subarray(12, sealed.length - 16)), d.final()]);
  } catch {
    throw new KeyIntegrityError('sealed value failed authentication (wrong master key or tampered data)');
  }
}

/**
 * The current master key (wraps everything new) plus older ones (still unwrap what they wrapped until
 * `coffer keys rotate` has re-wrapped it). Wrapped values are text: `k1.<keyId>.<base64url>`.
 */
export class Keyring {
  private readonly byId = new Map<string, MasterKey>();
  private currentKey: MasterKey;
  private refresher: (() => void) | null = null;

  constructor(current: MasterKey, others: readonly MasterKey[] = []) {
    this.currentKey = current;
    for (const k of [current, ...others]) this.byId.set(k.id, k);
  }

  /** The key that wraps everything new. */
  get current(): MasterKey {
    return this.currentKey;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** Every key this keyring can unwrap with, the current one first. */
  keys(): MasterKey[] {
    return [this.currentKey, ...[...this.byId.values()].filter((k) => k.id !== this.currentKey.id)];
  }

  /** Makes `current` the wrapping key; every key known before stays usable for unwrapping. */
  install(current: MasterKey, others: readonly MasterKey[] = []): void {
    for (const k of [current, ...others]) this.byId.set(k.id, k);
    this.currentKey = current;
  }

  /**
   * Called before wrapping and when a value names an unknown key: lets a long-running process pick up
   * a rotation that `coffer keys rotate` wrote to secrets.json beside it.
   */
  setRefresher(refresh: (() => void) | null): void {
    this.refresher = refresh;
  }

  /** Wraps a data key under the current master key. */
  wrap(dataKey: Uint8Array): string {
    this.refresher?.();
    return this.sealWith(this.currentKey, dataKey, WRAP_AAD);
  }

  unwrap(wrapped: string): Uint8Array {
    return this.openWith(wrapped, WRAP_AAD);
  }

  /** Re-wraps under the current key; returns the input unchanged when it already is. */
  rewrap(wrapped: string): string {
    if (wrappedKeyId(wrapped) === this.currentKey.id) return wrapped;
    return this.wrap(this.unwrap(wrapped));
  }

  /** Encrypts a small secret (an MFA seed) under the current master key. */
  sealSecret(plain: string): string {
    this.refresher?.();
    return this.sealWith(this.currentKey, Buffer.from(plain, 'utf8'), SECRET_AAD);
  }

  openSecret(sealed: string): string {
    return this.openWith(sealed, SECRET_AAD).toString('utf8');
  }

  private sealWith(key: MasterKey, plain: Uint8Array, aad: Buffer): string {
    return `${WRAP_VERSION}.${key.id}.${gcmSeal(key.key, plain, aad).toString('base64url')}`;
  }

  private openWith(wrapped: string, aad: Buffer): Buffer {
    const [version, id, body, extra] = wrapped.split('.');
    if (version !== WRAP_VERSION || !id || !body || extra !== undefined) {
      throw new KeyIntegrityError('wrapped value has an unknown format');
    }
    if (!this.byId.has(id)) this.refresher?.();
    const key = this.byId.get(id);
    if (!key) throw new KeyUnavailableError(`master key ${id} is not available; restore it into secrets.json`);
    return gcmOpen(key.key, Buffer.from(body, 'base64url'), aad);
  }
}

/** The id of the master key that wrapped a value, without unwrapping it. */
export function wrappedKeyId(wrapped: string): string {
  return wrapped.split('.')[1] ?? '';
}

export function makeKeyring(current: MasterKey, others: readonly MasterKey[] = []): Keyring {
  return new Keyring(current, others);
}
