import { describe, expect, mock, test } from 'bun:test';
import type { Item } from '../../src/db/repos/items.ts';
import type { LibrariesRepo } from '../../src/db/repos/libraries.ts';
import type { SharesRepo } from '../../src/db/repos/shares.ts';
import type { ThumbnailsRepo } from '../../src/db/repos/thumbnails.ts';
import { ItemViews } from '../../src/services/files/item-views.ts';

function views() {
  const shares = { statusOf: mock(() => new Map()) };
  const libraries = { statusOf: mock(() => new Map()) };
  const thumbnails = { statusOfItems: mock(() => []), durationsOf: mock(() => new Map()) };
  const v = new ItemViews(
    shares as unknown as SharesRepo,
    libraries as unknown as LibrariesRepo,
    thumbnails as unknown as ThumbnailsRepo,
    (type) => type === 'image/jpeg',
  );
  return { v, shares, libraries, thumbnails };
}

const file = (over: Partial<Item>): Item =>
  ({
    id: 'f1',
    accountId: 'a',
    parentId: null,
    type: 'file',
    name: 'a.bin',
    size: 4096,
    mimeType: 'application/octet-stream',
    storageKey: 'k',
    starred: false,
    modifiedAt: 1,
    accessedAt: 1,
    deletedAt: null,
    ...over,
  }) as Item;

describe("a just-uploaded file's view", () => {
  test('a stored file: no share or library lookup, the same view as a listing gives', () => {
    const { v, shares, libraries } = views();
    const row = file({});
    const view = v.inserted('a', row);
    expect(shares.statusOf).not.toHaveBeenCalled();
    expect(libraries.statusOf).not.toHaveBeenCalled();
    expect(view).toEqual(v.one('a', row));
  });

  test("a library's file and a video are looked up as a listing does", () => {
    for (const row of [file({ storageKey: null }), file({ mimeType: 'video/mp4' })]) {
      const { v, shares, libraries } = views();
      v.inserted('a', row);
      expect(shares.statusOf).toHaveBeenCalledTimes(1);
      expect(libraries.statusOf).toHaveBeenCalledTimes(1);
    }
  });

  test('an image still asks whether it has a thumbnail', () => {
    const { v, thumbnails } = views();
    v.inserted('a', file({ mimeType: 'image/jpeg' }));
    expect(thumbnails.statusOfItems).toHaveBeenCalledTimes(1);
  });
});
