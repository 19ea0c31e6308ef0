import { strToU8, zipSync } from 'fflate';
import { closeDatabase, openDatabase } from '../src/db/client.ts';
import { ContentRepo } from '../src/db/repos/content.ts';
import { ItemsRepo } from '../src/db/repos/items.ts';
import { newId } from '../src/lib/ids.ts';
import { searchable } from '../test/helpers/search-documents.ts';

export type DocKind = 'txt' | 'pdf' | 'docx' | 'xlsx';

const COMMON =
  'the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there been one all we their has would when if so no will more can said who out what up about into than them only some could time these two may then do first any now such like other'.split(
    ' ',
  );
const TOPICAL =
  'boiler pressure invoice inventory investment radiator gutter roof insurance mortgage tenant landlord contract warranty receipt payment holiday school doctor meeting budget garden kitchen window heating water electricity internet password router printer'.split(
    ' ',
  );

/** A deterministic pseudo-random source, so every run indexes the same text. */
function rng(seed: number): () => number {
  let s = seed * 2654435761 + 1;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

/** Words with a long tail: common words most of the time, topical ones often, made-up rare ones seldom; "zymurgy" in one document in 20,000. */
function words(seed: number, bytes: number): string {
  const r = rng(seed);
  const out: string[] = [];
  let size = 0;
  if (seed % 20_000 === 7) out.push('zymurgy');
  while (size < bytes) {
    const x = r();
    const w =
      x < 0.6
        ? COMMON[Math.floor(r() * COMMON.length)]!
        : x < 0.85
          ? TOPICAL[Math.floor(r() * TOPICAL.length)]!
          : `w${Math.floor(r() * 200_000).toString(36)}`;
    out.push(w);
    size += w.length + 1;
  }
  return out.join(' ');
}

/** Document `i` of a kind, about `bytes` long on disk (office files carry more text, as they are compressed). */
export function makeDocument(kind: DocKind, i: number, bytes: number): Uint8Array {
  switch (kind) {
    case 'txt':
      return strToU8(words(i, bytes));
    case 'pdf':
      return searchable.pdf(words(i, bytes * 0.9));
    case 'docx': {
      const paragraphs = (words(i, bytes * 2.5).match(/.{1,400}(\s|$)/g) ?? []).map((p) => `<w:p><w:r><w:t>${p}</w:t></w:r></w:p>`);
      return zipSync({
        '[Content_Types].xml': strToU8('<Types/>'),
        'word/document.xml': strToU8(`<w:document><w:body>${paragraphs.join('')}</w:body></w:document>`),
      });
    }
    case 'xlsx': {
      const cells = (words(i, bytes * 2.5).match(/.{1,60}(\s|$)/g) ?? []).map((c) => `<si><t>${c}</t></si>`);
      return zipSync({ '[Content_Types].xml': strToU8('<Types/>'), 'xl/sharedStrings.xml': strToU8(`<sst>${cells.join('')}</sst>`) });
    }
  }
}

/** Seeds `count` files with about 1 KiB of text each straight into the index of `accountId`, beside the running server (WAL). */
export function seedIndex(dbFile: string, accountId: string, count: number, prepare: (text: string) => string): void {
  const db = openDatabase(dbFile);
  const items = new ItemsRepo(db.$client);
  const content = new ContentRepo(db.$client);
  const now = Date.now();
  // Small transactions, so the server beside it is never kept waiting for the write lock for long.
  for (let start = 0; start < count; start += 100) {
    db.$client.transaction(() => {
      for (let i = start; i < Math.min(count, start + 100); i++) {
        const id = newId();
        const name = `Document ${String(i).padStart(6, '0')}.txt`;
        items.insert({
          id,
          accountId,
          parentId: null,
          type: 'file',
          name,
          size: 1024,
          mimeType: 'text/plain',
          storageKey: null,
          wrappedKey: null,
          keyId: null,
          starred: false,
          modifiedAt: now - i * 1000,
          accessedAt: now,
          createdAt: now,
        });
        const seq = content.nextPending(1)[0]?.seq;
        const text = `${i % 100 === 0 ? 'the boiler pressure was checked' : ''} ${words(i + 1_000_000, 1024)}`;
        if (seq !== undefined)
          content.record(
            { seq, id, accountId, name, size: 1024, storageKey: null, wrappedKey: null, library: false, optedOut: false },
            'indexed',
            new TextEncoder().encode(prepare(text)),
            now,
          );
      }
    })();
  }
  closeDatabase(db);
}
