import fs from 'node:fs';
import path from 'node:path';
import { Upload, type UploadOptions } from 'tus-js-client';
import type { TestClient } from './client.ts';

export const TUS = { 'Tus-Resumable': '1.0.0' };

/** The `cookie` header a TestClient sends, for a client that is not a TestClient (tus-js-client). */
function cookieOf(client: TestClient): string {
  return [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
}

/** Upload-Metadata from plain values (tus: key and base64 value). */
function metadataHeader(meta: Record<string, string>): string {
  return Object.entries(meta)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');
}

export interface TusRun {
  upload: Upload;
  /** Resolves once the upload succeeded: its URL and the created file's id (the last answer's Upload-Item-Id). */
  done: Promise<{ url: string; itemId: string | null }>;
}

/** Starts an upload with the real tus-js-client against `baseUrl`, signed in as `client`. */
export function tusUpload(baseUrl: string, client: TestClient, data: Buffer, opts: UploadOptions = {}): TusRun {
  let upload!: Upload;
  const done = new Promise<{ url: string; itemId: string | null }>((resolve, reject) => {
    upload = new Upload(data, {
      endpoint: `${baseUrl}/api/files/tus`,
      retryDelays: null,
      ...opts,
      metadata: { filename: 'upload.bin', ...opts.metadata },
      headers: { cookie: cookieOf(client), ...opts.headers },
      onError: (err) => {
        opts.onError?.(err);
        reject(err);
      },
      onSuccess: (payload) => resolve({ url: upload.url!, itemId: payload.lastResponse.getHeader('Upload-Item-Id') ?? null }),
    });
  });
  upload.start();
  return { upload, done };
}

/** POST /api/files/tus by hand. */
export function createUpload(client: TestClient, length: number, meta: Record<string, string>, headers: Record<string, string> = {}) {
  return client.request('/api/files/tus', {
    method: 'POST',
    headers: { ...TUS, 'Upload-Length': String(length), 'Upload-Metadata': metadataHeader(meta), ...headers },
  });
}

/** PATCH bytes at `offset` by hand. */
export function patchUpload(client: TestClient, location: string, offset: number, bytes: Uint8Array, headers: Record<string, string> = {}) {
  return client.request(location, {
    method: 'PATCH',
    headers: { ...TUS, 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream', ...headers },
    body: bytes,
  });
}

export function headUpload(client: TestClient, location: string) {
  return client.request(location, { method: 'HEAD', headers: TUS });
}

/** Every regular file under `dir` (database, its log, blobs, staged and temp files) that contains `marker`. */
export function filesContaining(dir: string, marker: Buffer): string[] {
  const hits: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && fs.readFileSync(p).includes(marker)) hits.push(p);
    }
  };
  walk(dir);
  return hits;
}

/** Staged objects (resumable uploads in progress) under a data dir. */
export function stagedFiles(dataDir: string): string[] {
  const dir = path.join(dataDir, 'blobs', '.staging');
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}
