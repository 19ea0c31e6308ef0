import { describe, expect, test } from 'bun:test';
import { localPath } from '../../src/contract/local-path.ts';

describe('localPath: the rule of every `next` (server after single sign-on, web app after sign-in)', () => {
  test('a path on this origin is kept, normalised as a browser reads it', () => {
    expect(localPath('/files/abc?view=grid#x')).toBe('/files/abc?view=grid#x');
    expect(localPath('/files/./a/../b')).toBe('/files/b');
    expect(localPath('/files/a%20b')).toBe('/files/a%20b');
  });

  test('anything that is or normalises to another origin, or that a browser would rewrite, is home', () => {
    for (const next of [
      null,
      undefined,
      '',
      'files',
      'https://evil.example/',
      'javascript:alert(1)',
      '//evil.example/steal',
      '/\\evil.example',
      '/.//evil.example',
      '/..//evil.example/x',
      '/a/..//evil.example',
      '/%2e//evil.example',
      '/%2E%2E//evil.example',
      '/files\\..\\\\evil.example',
      '/\t/evil.example',
      '/files\nx',
      '/files\u007fx',
    ]) {
      expect({ next, path: localPath(next) }).toEqual({ next, path: '/' });
    }
  });
});
