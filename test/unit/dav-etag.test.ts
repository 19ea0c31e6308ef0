import { expect, test } from 'bun:test';
import { escapeXml } from '../../src/lib/xml.ts';
import { etagOf, etagXmlOf } from '../../src/services/dav/dav.ts';

test('a listed row’s ETag as XML text is escapeXml of its ETag, for files and folders and any characters', () => {
  const odd = ['0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', `a<b>&"'`, '', 'é名🎉"', '"quoted"'];
  for (const id of odd)
    for (const storageKey of [null, '', 'objects/ab/cdef0123456789', `"<&>'x"-y-z`, 'é名🎉é名🎉é名🎉'])
      for (const type of ['file', 'folder'] as const) {
        const row = { id, type, storageKey, size: 4096, modifiedAt: 1_700_000_000_123, treeVersion: 1_704_067 };
        expect(etagXmlOf(row)).toBe(escapeXml(etagOf(row)));
      }
});

test('a library file (no storage key) names its content by its modified time: new content of the same size gets a new ETag', () => {
  const row = { id: 'x', type: 'file' as const, storageKey: null, size: 3, modifiedAt: 1_700_000_000_123, treeVersion: 0 };
  expect(etagOf({ ...row, modifiedAt: row.modifiedAt + 1 })).not.toBe(etagOf(row));
  // A stored file's ETag stays its object's: the time alone (a touch, X-OC-Mtime) does not move it.
  const stored = { ...row, storageKey: 'ab00cdefghijklmnop' };
  expect(etagOf({ ...stored, modifiedAt: row.modifiedAt + 1 })).toBe(etagOf(stored));
});
