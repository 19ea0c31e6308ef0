// Signs the S3 driver's calls; kept with it over Bun.S3Client (docs/development.md › S3 client).
import { createHash, createHmac } from 'node:crypto';

/**
 * AWS Signature Version 4 for S3 requests (the header form), as AWS documents it: canonical request,
 * string to sign, HMAC-SHA256 key chain. Small on purpose so it can be read whole; checked against
 * AWS's published examples in test/unit/s3-signer.test.ts.
 */
export interface SigningCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

/** RFC 3986 encoding: everything but A-Z a-z 0-9 - _ . ~ is percent-encoded (S3 wants `/` kept in paths). */
export function uriEncode(text: string, keepSlash = false): string {
  const out = encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return keepSlash ? out.replace(/%2F/g, '/') : out;
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmac(key: Uint8Array | string, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/** `20130524T000000Z` for a date. */
function amzDate(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

const signingKeys = new Map<string, Buffer>();

function signingKey(secret: string, day: string, region: string): Buffer {
  const id = `${secret}\n${day}\n${region}`;
  let key = signingKeys.get(id);
  if (!key) {
    key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), 's3'), 'aws4_request');
    // One key per day and region: the map never grows past a handful.
    if (signingKeys.size > 16) signingKeys.clear();
    signingKeys.set(id, key);
  }
  return key;
}

/**
 * Returns `headers` plus `x-amz-date`, `x-amz-content-sha256` and `authorization`. Every header given is
 * signed; `path` is the already-encoded request path, `query` the decoded parameters.
 */
export function signRequest(
  creds: SigningCredentials,
  req: {
    method: string;
    host: string;
    path: string;
    query: Record<string, string>;
    headers: Record<string, string>;
    payloadHash: string;
    date?: Date;
  },
): Record<string, string> {
  const stamp = amzDate(req.date ?? new Date());
  const day = stamp.slice(0, 8);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) headers[name.toLowerCase()] = value;
  headers.host = req.host;
  headers['x-amz-date'] = stamp;
  headers['x-amz-content-sha256'] = req.payloadHash;
  const names = Object.keys(headers).sort();
  const canonicalHeaders = names.map((n) => `${n}:${headers[n]!.trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');
  const canonicalQuery = Object.entries(req.query)
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalRequest = [req.method, req.path, canonicalQuery, canonicalHeaders, signedHeaders, req.payloadHash].join('\n');
  const scope = `${day}/${creds.region}/s3/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', stamp, scope, sha256Hex(canonicalRequest)].join('\n');
  const signature = hmac(signingKey(creds.secretAccessKey, day, creds.region), stringToSign).toString('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  delete headers.host;
  return headers;
}
