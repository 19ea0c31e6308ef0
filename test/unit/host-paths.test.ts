import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import {
  inFolderInside,
  HostPathError,
  hostNameProblem,
  hostPath,
  libraryRootProblem,
  openInside,
  relativeNames,
} from '../../src/storage/host-paths.ts';
import { tempDir } from '../helpers/run-root.ts';

const base = fs.realpathSync(tempDir('coffer-host-paths-'));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

const root = path.join(base, 'library');
const outside = path.join(base, 'outside');
fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
fs.mkdirSync(outside);
fs.writeFileSync(path.join(root, 'sub', 'in.txt'), 'inside');
fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'out-link'));
fs.symlinkSync(outside, path.join(root, 'out-dir'));
fs.symlinkSync(path.join(root, 'sub', 'in.txt'), path.join(root, 'in-link'));

describe('names', () => {
  test.each([
    ['..', /cannot be the name/],
    ['.', /cannot be the name/],
    ['', /empty/],
    ['a/b', /cannot contain "\/"/],
    ['nul\0byte', /NUL/],
    ['é'.repeat(128), /256 bytes/],
  ])('%j is refused', (name, message) => {
    expect(hostNameProblem(name)).toMatch(message);
  });

  test('ordinary, unicode and odd names are accepted', () => {
    for (const name of ['photo.jpg', '照片 2024.png', ' lead', 'a\\b', 'x'.repeat(255)]) expect(hostNameProblem(name)).toBeNull();
  });

  test('relative paths: "..", absolute and NUL refused at any place', () => {
    expect(relativeNames('a/b/c.txt')).toEqual(['a', 'b', 'c.txt']);
    expect(relativeNames('')).toEqual([]);
    for (const bad of ['../etc/passwd', 'a/../../b', '/etc/passwd', 'a//b', 'a/./b', 'a/b\0c']) {
      expect(() => relativeNames(bad)).toThrow(HostPathError);
    }
  });

  test('hostPath joins checked names only, under an absolute root', () => {
    expect(hostPath(root, ['sub', 'in.txt'])).toBe(path.join(root, 'sub', 'in.txt'));
    expect(() => hostPath(root, ['..', 'outside'])).toThrow(HostPathError);
    expect(() => hostPath('relative', ['x'])).toThrow(HostPathError);
  });
});

describe('opening', () => {
  test('a file inside opens; a symlink to a file inside opens too', () => {
    for (const names of [['sub', 'in.txt'], ['in-link']]) {
      const fd = openInside(root, names);
      expect(fs.readFileSync(fd, 'utf8')).toBe('inside');
      fs.closeSync(fd);
    }
  });

  test('a symlink leading out, at the end or in the middle of the path, is refused after opening', () => {
    expect(() => openInside(root, ['out-link'])).toThrow(HostPathError);
    expect(() => openInside(root, ['out-dir', 'secret.txt'])).toThrow(HostPathError);
    expect(() => inFolderInside(root, ['out-dir'], () => 0)).toThrow(HostPathError);
  });

  test('a folder is not a file, and a FIFO is never opened for reading', () => {
    expect(() => openInside(root, ['sub'])).toThrow(HostPathError);
    const fifo = path.join(root, 'fifo');
    expect(Bun.spawnSync(['mkfifo', fifo]).exitCode).toBe(0);
    // O_NONBLOCK: opening a FIFO with no writer returns at once, and the check refuses it.
    expect(() => openInside(root, ['fifo'])).toThrow(HostPathError);
    fs.rmSync(fifo);
  });
});

describe('library roots', () => {
  const dataDir = path.join(base, 'data');
  fs.mkdirSync(path.join(dataDir, 'blobs'), { recursive: true });
  const check = (p: string, otherRoots: string[] = []) => libraryRootProblem(p, { dataDir, otherRoots });

  test('an absolute existing folder is accepted, resolved', () => {
    expect(check(path.join(root, 'sub', '..'))).toEqual({ root });
  });

  test.each([
    ['relative', 'library', /not an absolute path/],
    ['missing', path.join(base, 'missing'), /does not exist/],
    ['a file', path.join(root, 'sub', 'in.txt'), /not a folder/],
    ['/', '/', /root of the file system/],
    ['inside the data directory', path.join(dataDir, 'blobs'), /inside Coffer's data directory/],
    ['holding the data directory', base, /holds Coffer's data directory/],
  ])('%s → refused', (_what, p, message) => {
    const result = check(p);
    expect('problem' in result && result.problem).toMatch(message);
  });

  test('inside or around another library → refused', () => {
    expect(check(path.join(root, 'sub'), [root])).toEqual({ problem: expect.stringMatching(/inside the library/) });
    expect(check(root, [path.join(root, 'sub')])).toEqual({ problem: expect.stringMatching(/holds the library/) });
    expect(check(outside, [root])).toEqual({ root: outside });
  });
});
