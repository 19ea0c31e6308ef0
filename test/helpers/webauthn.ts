import { createHash, randomBytes } from 'node:crypto';

/**
 * A software passkey: an ES256 key pair and a signature counter, answering WebAuthn ceremonies as an
 * authenticator and a browser would (attestation "none", hand-built authenticatorData and clientDataJSON),
 * so API tests and benchmarks can register and sign in without a browser, and replay or forge answers.
 */
export interface SoftPasskey {
  credentialId: string;
  counter: number;
  keys: CryptoKeyPair;
  userHandle: string;
}

const b64url = (bytes: Uint8Array | ArrayBuffer) =>
  Buffer.from(bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => new Uint8Array(createHash('sha256').update(data).digest());

// The few CBOR shapes an attestation object needs: maps, byte and text strings, small integers.
function cbor(value: unknown): Uint8Array {
  const head = (major: number, n: number): number[] => {
    if (n < 24) return [(major << 5) | n];
    if (n < 256) return [(major << 5) | 24, n];
    return [(major << 5) | 25, n >> 8, n & 0xff];
  };
  if (typeof value === 'number') return Uint8Array.from(value >= 0 ? head(0, value) : head(1, -1 - value));
  if (typeof value === 'string') {
    const bytes = new TextEncoder().encode(value);
    return Uint8Array.from([...head(3, bytes.length), ...bytes]);
  }
  if (value instanceof Uint8Array) return Uint8Array.from([...head(2, value.length), ...value]);
  if (value instanceof Map) {
    const parts = [...value].flatMap(([k, v]) => [...cbor(k), ...cbor(v)]);
    return Uint8Array.from([...head(5, value.size), ...parts]);
  }
  throw new Error(`cbor: unsupported ${typeof value}`);
}

const concat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));
const u32 = (n: number) => Uint8Array.from([(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);

/** WebCrypto's ECDSA signature (r ‖ s) as the DER sequence WebAuthn carries. */
function derSignature(raw: Uint8Array): Uint8Array {
  const integer = (bytes: Uint8Array) => {
    let i = 0;
    while (i < bytes.length - 1 && bytes[i] === 0) i++;
    const trimmed = bytes.slice(i);
    const body = trimmed[0]! & 0x80 ? concat(Uint8Array.of(0), trimmed) : trimmed;
    return concat(Uint8Array.of(0x02, body.length), body);
  };
  const seq = concat(integer(raw.slice(0, 32)), integer(raw.slice(32)));
  return concat(Uint8Array.of(0x30, seq.length), seq);
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface CreationOptions {
  challenge: string;
  rp: { id?: string };
  user: { id: string };
}
export interface RequestOptions {
  challenge: string;
  rpId?: string;
}

/** Answers registration options: a new key pair, and the response `POST /api/passkeys` takes; `credentialBytes` sizes its id (32). */
export async function createPasskey(options: CreationOptions, origin: string, opts: { credentialBytes?: number } = {}) {
  const keys = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const jwk = await crypto.subtle.exportKey('jwk', keys.publicKey);
  const credential = new Uint8Array(randomBytes(opts.credentialBytes ?? 32));
  const cose = cbor(
    new Map<number, unknown>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
    ]),
  );
  const rpId = options.rp.id ?? new URL(origin).hostname;
  const authData = concat(
    sha256(rpId),
    Uint8Array.of(FLAG_UP | FLAG_UV | FLAG_AT),
    u32(0),
    new Uint8Array(16),
    Uint8Array.of(credential.length >> 8, credential.length & 0xff),
    credential,
    cose,
  );
  const attestationObject = cbor(
    new Map<string, unknown>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', authData],
    ]),
  );
  const clientDataJSON = JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin, crossOrigin: false });
  const passkey: SoftPasskey = { credentialId: b64url(credential), counter: 0, keys, userHandle: options.user.id };
  const response = {
    id: passkey.credentialId,
    rawId: passkey.credentialId,
    type: 'public-key',
    response: {
      clientDataJSON: b64url(new TextEncoder().encode(clientDataJSON)),
      attestationObject: b64url(attestationObject),
      transports: ['internal'],
    },
    clientExtensionResults: {},
    authenticatorAttachment: 'platform',
  };
  return { passkey, response };
}

/**
 * Answers sign-in options with the passkey: the counter goes up by one unless `counter` names the value to
 * send (a cloned key's stale one); `userVerified: false` is a security key without a PIN.
 */
export async function signWithPasskey(
  passkey: SoftPasskey,
  options: RequestOptions,
  origin: string,
  opts: { counter?: number; userVerified?: boolean } = {},
) {
  const counter = opts.counter ?? passkey.counter + 1;
  if (opts.counter === undefined) passkey.counter = counter;
  const rpId = options.rpId ?? new URL(origin).hostname;
  const authData = concat(sha256(rpId), Uint8Array.of(FLAG_UP | (opts.userVerified === false ? 0 : FLAG_UV)), u32(counter));
  const clientData = new TextEncoder().encode(
    JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin, crossOrigin: false }),
  );
  const signed = concat(authData, sha256(clientData));
  const raw = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, passkey.keys.privateKey, signed));
  return {
    id: passkey.credentialId,
    rawId: passkey.credentialId,
    type: 'public-key',
    response: {
      clientDataJSON: b64url(clientData),
      authenticatorData: b64url(authData),
      signature: b64url(derSignature(raw)),
      userHandle: passkey.userHandle,
    },
    clientExtensionResults: {},
    authenticatorAttachment: 'platform',
  };
}
