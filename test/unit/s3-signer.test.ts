import { describe, expect, test } from 'bun:test';
import { sha256Hex, signRequest, UNSIGNED_PAYLOAD, uriEncode } from '../../src/storage/s3-signer.ts';

// The examples of AWS's "Signature Calculations for the Authorization Header" page for S3.
const creds = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', region: 'us-east-1' };
const date = new Date('2013-05-24T00:00:00Z');
const host = 'examplebucket.s3.amazonaws.com';
const EMPTY = sha256Hex('');

function signatureOf(headers: Record<string, string>): string {
  return /Signature=([0-9a-f]{64})$/.exec(headers.authorization!)![1]!;
}

describe('SigV4 against AWS published examples', () => {
  test('GET object with a Range header', () => {
    const h = signRequest(creds, {
      method: 'GET',
      host,
      path: '/test.txt',
      query: {},
      headers: { range: 'bytes=0-9' },
      payloadHash: EMPTY,
      date,
    });
    expect(h.authorization).toContain('SignedHeaders=host;range;x-amz-content-sha256;x-amz-date');
    expect(signatureOf(h)).toBe('f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41');
  });

  test('GET bucket lifecycle (a sub-resource with an empty value)', () => {
    const h = signRequest(creds, { method: 'GET', host, path: '/', query: { lifecycle: '' }, headers: {}, payloadHash: EMPTY, date });
    expect(signatureOf(h)).toBe('fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543');
  });

  test('GET bucket listing with query parameters', () => {
    const h = signRequest(creds, {
      method: 'GET',
      host,
      path: '/',
      query: { 'max-keys': '2', prefix: 'J' },
      headers: {},
      payloadHash: EMPTY,
      date,
    });
    expect(signatureOf(h)).toBe('34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7');
  });

  test('PUT object with a signed payload and extra headers', () => {
    const body = 'Welcome to Amazon S3.';
    const h = signRequest(creds, {
      method: 'PUT',
      host,
      path: `/${uriEncode('test$file.text', true)}`,
      query: {},
      headers: { date: 'Fri, 24 May 2013 00:00:00 GMT', 'x-amz-storage-class': 'REDUCED_REDUNDANCY' },
      payloadHash: sha256Hex(body),
      date,
    });
    expect(signatureOf(h)).toBe('98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd');
  });

  test('unsigned payloads are named in the header and the signature', () => {
    const h = signRequest(creds, { method: 'PUT', host, path: '/k', query: {}, headers: {}, payloadHash: UNSIGNED_PAYLOAD, date });
    expect(h['x-amz-content-sha256']).toBe(UNSIGNED_PAYLOAD);
    expect(h.host).toBeUndefined();
  });
});
