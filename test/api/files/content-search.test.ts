import { beforeAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { folder, upload } from '../../helpers/files.ts';
import { hostile, searchable } from '../../helpers/search-documents.ts';
import * as seed from '../../helpers/seed.ts';

let t: TestServer;
let admin: seed.SeededLogin;

// Small caps, so a "too large" file and a text cut short are quick to make.
serverWithAdmin((s) => ({ t, admin } = s), { env: { SEARCH_MAX_TEXT_BYTES: '64K', SEARCH_MAX_FILE_BYTES: '2M' } });

const content = t_repo();
function t_repo() {
  return {
    progress: () => t.server.ctx.repos.content.progress(),
    rowsOf: (accountId: string) => t.server.ctx.repos.content.accountRows(accountId),
  };
}

async function search(client: TestClient, q: string, opts: { content?: boolean; shared?: boolean } = { content: true }): Promise<any[]> {
  const res = await client.get(
    `/api/files/search?q=${encodeURIComponent(q)}${opts.content ? '&content=true' : ''}${opts.shared ? '&includeShared=true' : ''}`,
  );
  expect(res.status).toBe(200);
  return json(res);
}

async function setEnabled(enabled: boolean) {
  const res = await admin.client.put('/api/user/content-search-config', { enabled });
  expect(res.status).toBe(200);
  return json(res);
}

/** Waits until the indexer has drained its queue (and backfill), so what was uploaded is searchable. */
const indexed = () =>
  eventually(() => content.progress().pending === 0 && t.server.ctx.repos.content.nextPending(1).length === 0, { timeoutMs: 30_000 });

const inText = (hits: any[]) => hits.filter((h) => h.match === 'content');

describe('switch', () => {
  test('off by default: content=true is ignored (names only) and nothing is indexed', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'notes.txt', 'the wifi password is hunter2');
    const hits = await search(o.client, 'hunter2');
    expect(hits).toEqual([]);
    const byName = await search(o.client, 'notes');
    expect(byName.map((h) => h.name)).toEqual(['notes.txt']);
    expect(byName[0].snippet).toBeUndefined();
    expect(content.progress()).toEqual({ indexed: 0, pending: 0, textBytes: 0 });
    expect(await json(await admin.client.get('/api/user/content-search-config'))).toEqual({
      enabled: false,
      indexed: 0,
      pending: 0,
      textBytes: 0,
    });
  });

  test('only the admin reads or changes it; a bad body is 422 naming enabled', async () => {
    const o = await seed.owner(t);
    for (const res of [
      await o.client.get('/api/user/content-search-config'),
      await o.client.put('/api/user/content-search-config', { enabled: true }),
    ]) {
      expect(res.status).toBe(403);
      expect((await json(res)).message).toBe('Only the admin can perform this action.');
    }
    const bad = await admin.client.put('/api/user/content-search-config', { enabled: 'yes' });
    expect(bad.status).toBe(422);
    expect((await json(bad)).details.map((d: any) => d.field)).toContain('enabled');
  });
});

describe('with content search on', () => {
  let o: seed.SeededLogin;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    o = await seed.owner(t);
    const files: Array<[string, string | Uint8Array]> = [
      ['before.txt', 'uploaded before the switch: backfill finds marmalade'],
      ['readme.md', '# Heating\nThe **boiler** needs a service every spring.'],
      ['script', '#!/bin/sh\necho zanzibar_function_name\n'],
      ['data.csv', 'name,city\nAlice,Quimper\n'],
      // Text that starts with a ZIP's first two letters (a "PK" primary-key column) is still text.
      ['keys.csv', 'PK,town\n1,Wombatville\n'],
      ['config.json', '{"ssid": "kestrelnet"}'],
      [
        'page.html',
        '<html><head><script>var hiddenscript = 1</script><style>.x{}</style></head><body><p>Visible &amp; plain <b>porcupine</b></p></body></html>',
      ],
      [
        'plan.svg',
        '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" class="lemurclass"><title>Floor plan</title><desc>Kitchen layout</desc>' +
          '<style>.gecko{fill:red}</style><metadata>okapicreator</metadata><rect fill="cassowary" stroke-width="2"/>' +
          '<text x="1" y="2">Wardrobe <tspan font-family="ibexfont">cupboard</tspan></text></svg>',
      ],
      // An SVG is read as one whatever its name.
      ['icon', '<!-- drawn by hand --><svg viewBox="0 0 9 9" id="marmosetid"><text>Hedgehog</text></svg>'],
      ['invoice.pdf', searchable.pdf('Invoice for the boiler repair in March')],
      ['letter.docx', searchable.docx('Dear landlord, the radiator leaks', 'Regards')],
      ['budget.xlsx', searchable.xlsx('Groceries', 'Tangerines')],
      ['talk.pptx', searchable.pptx('Quarterly review', 'Wolverine roadmap')],
      ['minutes.odt', searchable.odt('Minutes of the residents meeting about gutters')],
      ['sheet.ods', searchable.ods('Pomegranate harvest')],
      ['deck.odp', searchable.odp('Lighthouse keeper slides')],
      ['accents.txt', 'Le café est prêt à Besançon'],
      ['japanese.txt', '東京都の天気は晴れです'],
      ['binary.bin', new Uint8Array([0, 1, 2, 3, 0, 255, 0, 9, ...new TextEncoder().encode('binaryword')])],
    ];
    ids['before.txt'] = (await upload(o.client, 'before.txt', files[0]![1])).id;
    await setEnabled(true);
    for (const [name, body] of files.slice(1)) ids[name] = (await upload(o.client, name, body)).id;
    await indexed();
  }, 60_000);

  test.each([
    ['marmalade', 'before.txt'],
    ['boiler', 'readme.md'],
    ['zanzibar_function_name', 'script'],
    ['Quimper', 'data.csv'],
    ['Wombatville', 'keys.csv'],
    ['kestrelnet', 'config.json'],
    ['porcupine', 'page.html'],
    ['Wardrobe', 'plan.svg'],
    ['Kitchen', 'plan.svg'],
    ['Hedgehog', 'icon'],
    ['March', 'invoice.pdf'],
    ['radiator', 'letter.docx'],
    ['Tangerines', 'budget.xlsx'],
    ['4242', 'budget.xlsx'],
    ['Wolverine', 'talk.pptx'],
    ['gutters', 'minutes.odt'],
    ['Pomegranate', 'sheet.ods'],
    ['Lighthouse', 'deck.odp'],
  ])('%p is found in %p, with the word in <mark>', async (word, name) => {
    const hits = inText(await search(o.client, word));
    expect(hits.map((h) => h.name)).toContain(name);
    const hit = hits.find((h) => h.name === name);
    expect(hit.snippet.toLowerCase()).toContain(`<mark>${word.toLowerCase()}</mark>`);
    expect(hit).toMatchObject({ id: ids[name], type: 'file' });
  });

  test("an upload wakes an idle indexer: four texts in a row are each found at once, not at the indexer's next look", async () => {
    await indexed();
    const started = performance.now();
    for (const word of ['quokka', 'axolotl', 'pangolin', 'tapir']) {
      await upload(o.client, `note-${word.length}-${word[0]}.txt`, `a note about the ${word}`);
      await eventually(async () => inText(await search(o.client, word)).length === 1);
    }
    // An idle indexer looks every 2 s by itself: four uploads waiting for it take about 8 s.
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  test('markup is stripped: a script in an HTML page is not text, and the snippet escapes the document', async () => {
    expect(inText(await search(o.client, 'hiddenscript'))).toEqual([]);
    const [hit] = inText(await search(o.client, 'porcupine'));
    expect(hit.snippet).toBe('Visible &amp; plain <mark>porcupine</mark>');
  });

  test('an SVG gives its text, titles and descriptions, never its tags, attributes, styles or metadata', async () => {
    for (const word of ['lemurclass', 'gecko', 'okapicreator', 'cassowary', 'ibexfont', 'xmlns', 'stroke', 'marmosetid', 'viewBox'])
      expect(inText(await search(o.client, word))).toEqual([]);
    expect(inText(await search(o.client, 'cupboard')).map((h) => h.name)).toEqual(['plan.svg']);
  });

  test('binary files have no text', async () => {
    expect(inText(await search(o.client, 'binaryword'))).toEqual([]);
  });

  test('"quoted phrases" match words in order; prefix terms match the start of words; words are all required', async () => {
    expect(inText(await search(o.client, '"boiler repair"')).map((h) => h.name)).toEqual(['invoice.pdf']);
    expect(inText(await search(o.client, '"repair boiler"'))).toEqual([]);
    expect(
      inText(await search(o.client, 'boil*'))
        .map((h) => h.name)
        .sort(),
    ).toEqual(['invoice.pdf', 'readme.md']);
    expect(inText(await search(o.client, 'boiler spring')).map((h) => h.name)).toEqual(['readme.md']);
    // FTS5 operators typed by a person are plain words, never a syntax error.
    for (const q of ['NOT boiler', 'boiler OR', '"unterminated', '*', 'a:b', '(boiler', 'NEAR(a b)']) {
      expect((await o.client.get(`/api/files/search?q=${encodeURIComponent(q)}&content=true`)).status).toBe(200);
    }
    // A NUL is refused before either index sees it (FTS5 read it as the end of a string: 500).
    const nul = await o.client.get(`/api/files/search?q=${encodeURIComponent('boil\0er')}&content=true&includeShared=true`);
    expect(nul.status).toBe(400);
    expect((await json(nul)).message).toBe('A search cannot contain a NUL character: remove it and search again');
  });

  test('accents are folded both ways; Japanese is found without spaces', async () => {
    expect(inText(await search(o.client, 'cafe besancon')).map((h) => h.name)).toEqual(['accents.txt']);
    expect(inText(await search(o.client, 'prêt')).map((h) => h.name)).toEqual(['accents.txt']);
    const [hit] = inText(await search(o.client, '天気'));
    expect(hit.name).toBe('japanese.txt');
    expect(hit.snippet).toContain('<mark>天気</mark>');
    expect(inText(await search(o.client, '京天'))).toEqual([]);
  });

  test('the text reaches the index as text, character for character, its size counted in UTF-8 bytes', async () => {
    const stored = (name: string) =>
      t.server.ctx.db.$client
        .query<{ kind: string; body: string; textBytes: number }, [string]>(
          `SELECT typeof(f.body) AS kind, f.body, d.text_bytes AS textBytes FROM items i
           JOIN content_fts f ON f.rowid = i.seq JOIN content_docs d ON d.seq = i.seq WHERE i.id = ?`,
        )
        .get(ids[name]!);
    expect(stored('accents.txt')).toEqual({ kind: 'text', body: 'Le café est prêt à Besançon', textBytes: 31 });
    const japanese = stored('japanese.txt')!;
    expect(japanese.kind).toBe('text');
    expect(japanese.body.replaceAll('\u200B', '')).toBe('東京都の天気は晴れです');
    expect(japanese.textBytes).toBe(Buffer.byteLength(japanese.body));
  });

  test('a name match that also matches in the text comes once, as a name match with its snippet', async () => {
    const hits = await search(o.client, 'invoice');
    expect(hits.filter((h) => h.id === ids['invoice.pdf'])).toHaveLength(1);
    expect(hits[0]).toMatchObject({ name: 'invoice.pdf', match: 'name' });
    expect(hits[0].snippet).toContain('<mark>Invoice</mark>');
  });

  test('at most 20 text matches, however the limit is written: a limit below 1 counts as 1, as for names', async () => {
    const many = await seed.owner(t);
    for (let i = 0; i < 24; i++) await upload(many.client, `note-${i}.txt`, `a quokka sighting, number ${i}`);
    await indexed();
    const count = async (limit: string) => {
      const res = await many.client.get(`/api/files/search?q=quokka&content=true${limit}`);
      expect(res.status).toBe(200);
      return inText(await json(res)).length;
    };
    expect(await count('')).toBe(20);
    expect(await count('&limit=5')).toBe(5);
    expect(await count('&limit=500')).toBe(20);
    expect(await count('&limit=0')).toBe(1);
    expect(await count('&limit=-1')).toBe(1);
  });

  test('another account never sees these documents', async () => {
    const other = await seed.owner(t);
    expect(await search(other.client, 'boiler')).toEqual([]);
    expect(await search(other.client, 'radiator')).toEqual([]);
  });

  test('a sub-user finds the items; without files.download the snippet is null', async () => {
    const reader = await seed.subUser(t, o, ['files.download']);
    const [withWords] = inText(await search(reader.client, 'radiator'));
    expect(withWords.snippet).toContain('<mark>radiator</mark>');
    const blind = await seed.subUser(t, o, ['files.upload']);
    const [noWords] = inText(await search(blind.client, 'radiator'));
    expect(noWords).toMatchObject({ id: ids['letter.docx'], snippet: null });
  });

  test('replace re-indexes the new text; trash hides the file; permanent delete removes its rows', async () => {
    const file = await upload(o.client, 'draft.txt', 'first version mentions albatross');
    await indexed();
    expect(inText(await search(o.client, 'albatross')).map((h) => h.id)).toEqual([file.id]);
    const form = new FormData();
    form.append('file', new File(['second version mentions flamingo'], 'draft.txt'));
    expect((await o.client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form })).status).toBe(200);
    await eventually(async () => expect(inText(await search(o.client, 'flamingo')).map((h) => h.id)).toEqual([file.id]), {
      timeoutMs: 30_000,
    });
    expect(inText(await search(o.client, 'albatross'))).toEqual([]);

    const rows = content.rowsOf(o.id);
    expect((await o.client.post('/api/files/delete', { ids: [file.id] })).status).toBe(200);
    expect(inText(await search(o.client, 'flamingo'))).toEqual([]);
    expect(content.rowsOf(o.id)).toBe(rows);
    expect([200, 202]).toContain((await o.client.post('/api/files/trash/delete', { ids: [file.id] })).status);
    await eventually(() => content.rowsOf(o.id) === rows - 1, { timeoutMs: 30_000 });
  });

  test('restoring a version indexes the restored text', async () => {
    const file = await upload(o.client, 'plan.txt', 'the first plan mentions pelicans');
    const form = new FormData();
    form.append('file', new File(['the second plan mentions walruses'], 'plan.txt'));
    expect((await o.client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form })).status).toBe(200);
    await eventually(async () => expect(inText(await search(o.client, 'walruses')).map((h) => h.id)).toEqual([file.id]), {
      timeoutMs: 30_000,
    });
    const [old] = (await json(await o.client.get(`/api/files/${file.id}/versions`))).versions;
    expect((await o.client.post(`/api/files/${file.id}/versions/${old.id}/restore`)).status).toBe(200);
    await eventually(async () => expect(inText(await search(o.client, 'pelicans')).map((h) => h.id)).toEqual([file.id]), {
      timeoutMs: 30_000,
    });
    expect(inText(await search(o.client, 'walruses'))).toEqual([]);
  });

  test('a rename that changes how a file is read indexes it again: a document saved under a temporary name (as WebDAV clients save)', async () => {
    const file = await upload(o.client, 'lu4711.tmp', searchable.docx('The chinchilla report'));
    const page = await upload(o.client, 'snippet-page.txt', '<p>visible <script>var concealedmarkup</script></p>');
    await indexed();
    expect(inText(await search(o.client, 'chinchilla'))).toEqual([]);
    expect(inText(await search(o.client, 'concealedmarkup')).map((h) => h.id)).toEqual([page.id]);
    expect((await o.client.post('/api/files/rename', { id: file.id, name: 'Report.DOCX' })).status).toBe(200);
    expect((await o.client.post('/api/files/rename', { id: page.id, name: 'snippet-page.html' })).status).toBe(200);
    await eventually(async () => expect(inText(await search(o.client, 'chinchilla')).map((h) => h.id)).toEqual([file.id]), {
      timeoutMs: 30_000,
    });
    await eventually(async () => expect(inText(await search(o.client, 'concealedmarkup'))).toEqual([]), { timeoutMs: 30_000 });
    // A rename that keeps the extension reads nothing again.
    const before = content.progress().indexed;
    expect((await o.client.post('/api/files/rename', { id: file.id, name: 'Final report.docx' })).status).toBe(200);
    expect(t.server.ctx.repos.content.nextPending(1)).toEqual([]);
    expect(content.progress().indexed).toBe(before);
  });

  test('a file renamed while it is being extracted is read again under its new name', async () => {
    const names = Array.from({ length: 5 }, (_, i) => `capybara${i}`);
    const files = [];
    for (const word of names)
      files.push(await upload(o.client, `saved-${files.length}.tmp`, searchable.docx(`A note on the ${word}`, 'x'.repeat(200_000))));
    await Promise.all(files.map((f, i) => o.client.post('/api/files/rename', { id: f.id, name: `saved-${i}.docx` })));
    await indexed();
    for (const [i, word] of names.entries()) expect(inText(await search(o.client, word)).map((h) => h.id)).toEqual([files[i].id]);
  });

  test('a copy is indexed as its own file', async () => {
    const res = await o.client.post('/api/files/copy', { ids: [ids['letter.docx']], parentId: null });
    expect([200, 202]).toContain(res.status);
    await eventually(async () => expect(inText(await search(o.client, 'radiator'))).toHaveLength(2), { timeoutMs: 30_000 });
  });

  test('files replaced or deleted while earlier texts are being written end with their last text, or none', async () => {
    // More than one extraction batch (32) of long texts, so the changes land while texts are on their way to the writer.
    const filler = 'plain words to tokenize '.repeat(2500);
    const files: any[] = [];
    for (let i = 0; i < 40; i++) files.push(await upload(o.client, `busy-${i}.txt`, `oldword${i} ${filler}`));
    const replaced = files.filter((_, i) => i % 3 === 0);
    const deleted = files.filter((_, i) => i % 3 === 1 && i % 2 === 0);
    for (const file of replaced) {
      const i = files.indexOf(file);
      const form = new FormData();
      form.append('file', new File([`newword${i} ${filler}`], file.name));
      expect((await o.client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form })).status).toBe(200);
    }
    for (const file of deleted) {
      expect((await o.client.post('/api/files/delete', { ids: [file.id] })).status).toBe(200);
      expect([200, 202]).toContain((await o.client.post('/api/files/trash/delete', { ids: [file.id] })).status);
    }
    await indexed();
    for (const [i, file] of files.entries()) {
      const gone = deleted.includes(file);
      const changed = replaced.includes(file);
      expect(inText(await search(o.client, `oldword${i}`)).map((h) => h.id)).toEqual(gone || changed ? [] : [file.id]);
      if (changed) expect(inText(await search(o.client, `newword${i}`)).map((h) => h.id)).toEqual([file.id]);
    }
    const docs = t.server.ctx.db.$client.query<{ n: number }, []>(
      `SELECT count(*) AS n FROM content_docs d JOIN items i ON i.seq = d.seq WHERE i.name LIKE 'busy-%' AND d.storage_key IS i.storage_key`,
    );
    // Deleting for good runs in the background (202): the deleted files' rows leave with their items.
    await eventually(() => docs.get()?.n === files.length - deleted.length, { timeoutMs: 30_000 });
  }, 60_000);

  test('files above SEARCH_MAX_FILE_BYTES are skipped; text past SEARCH_MAX_TEXT_BYTES is not kept', async () => {
    const filler = 'lorem ipsum dolor sit amet '.repeat(3000);
    await upload(o.client, 'huge.txt', `gigantosaurus ${'x'.repeat(2.5 * 1024 ** 2)}`);
    await upload(o.client, 'long.txt', `openingword ${filler} closingword`);
    await indexed();
    expect(inText(await search(o.client, 'gigantosaurus'))).toEqual([]);
    expect(inText(await search(o.client, 'openingword')).map((h) => h.name)).toEqual(['long.txt']);
    expect(inText(await search(o.client, 'closingword'))).toEqual([]);
  });

  test('hostile documents give no text, and the server keeps indexing', async () => {
    const before = content.progress().indexed;
    await upload(o.client, 'bomb.docx', hostile.zipBomb());
    await upload(o.client, 'deep.docx', hostile.deepXml());
    await upload(o.client, 'loop.pdf', hostile.loopingPdf());
    await upload(o.client, 'after.txt', 'written after the hostile ones: narwhal');
    await indexed();
    expect(content.progress().indexed).toBe(before + 4);
    expect(inText(await search(o.client, 'secret'))).toEqual([]);
    expect(inText(await search(o.client, 'narwhal')).map((h) => h.name)).toEqual(['after.txt']);
    expect((await fetch(`${t.url}/health`)).status).toBe(200);
  }, 60_000);

  test('the admin sees progress', async () => {
    const config = await json(await admin.client.get('/api/user/content-search-config'));
    expect(config).toMatchObject({ enabled: true, pending: 0 });
    expect(config.indexed).toBeGreaterThan(15);
    expect(config.textBytes).toBeGreaterThan(100);
  });
});

describe('shared with people', () => {
  const shared = (client: TestClient, q: string) => search(client, q, { content: true, shared: true });

  /** An owner sharing folder `Lake` (holding `inside.txt`) with a viewer; `outside.txt` elsewhere has the same word. */
  async function sharedLake() {
    await setEnabled(true);
    const owner = await seed.owner(t);
    const root = await folder(owner.client, 'Lake');
    const sub = await folder(owner.client, 'Deeper', root.id);
    const inside = await upload(owner.client, 'inside.txt', 'the fjord report, inside the share', { parentId: sub.id });
    const outside = await upload(owner.client, 'outside.txt', 'the fjord diary, never shared');
    const member = await seed.owner(t);
    const added = await owner.client.post(`/api/files/${root.id}/members`, { email: member.email, role: 'viewer' });
    expect(added.status).toBe(201);
    await indexed();
    return { owner, root, inside, outside, member };
  }

  test("a member finds text inside the share, never the owner's other documents, and only with includeShared", async () => {
    const { owner, inside, member } = await sharedLake();
    const hits = inText(await shared(member.client, 'fjord'));
    expect(hits.map((h) => h.id)).toEqual([inside.id]);
    expect(hits[0].snippet).toContain('<mark>fjord</mark>');
    expect(inText(await search(member.client, 'fjord'))).toEqual([]);
    expect(inText(await shared(owner.client, 'fjord'))).toHaveLength(2);
  });

  test("a member's sub-user without Download gets the item with snippet null", async () => {
    const { inside, member } = await sharedLake();
    const blind = await seed.subUser(t, member, ['files.upload']);
    expect(inText(await shared(blind.client, 'fjord'))).toMatchObject([{ id: inside.id, snippet: null }]);
  });

  test('after removal, with the owner disabled or the admin switch off, nothing shared is found', async () => {
    const { owner, root, member } = await sharedLake();
    expect((await admin.client.send('PATCH', `/api/user/${owner.id}`, { disabled: true })).status).toBe(200);
    expect(inText(await shared(member.client, 'fjord'))).toEqual([]);
    expect((await admin.client.send('PATCH', `/api/user/${owner.id}`, { disabled: false })).status).toBe(200);
    expect((await admin.client.put('/api/user/people-sharing-config', { enabled: false })).status).toBe(200);
    try {
      expect(inText(await shared(member.client, 'fjord'))).toEqual([]);
    } finally {
      await admin.client.put('/api/user/people-sharing-config', { enabled: true });
    }
    expect(inText(await shared(member.client, 'fjord'))).toHaveLength(1);
    const ownerClient = await seed.login(t, owner.email);
    expect((await ownerClient.delete(`/api/files/${root.id}/members/${member.id}`)).status).toBe(200);
    expect(inText(await shared(member.client, 'fjord'))).toEqual([]);
  });

  test('the sharing owner opted out: nothing of theirs is found by text', async () => {
    const { owner, member } = await sharedLake();
    expect(inText(await shared(member.client, 'fjord'))).toHaveLength(1);
    expect((await owner.client.put('/api/user/content-search-preference', { optOut: true })).status).toBe(200);
    expect(inText(await shared(member.client, 'fjord'))).toEqual([]);
  });
});

describe('account opt-out', () => {
  test('the owner opts out: its rows are deleted and content matches stop; opting back in indexes again; a sub-user may not change it', async () => {
    await setEnabled(true);
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.download', 'files.upload']);
    await upload(o.client, 'secret.txt', 'the safe code is okapi');
    await indexed();
    expect(inText(await search(o.client, 'okapi'))).toHaveLength(1);
    expect(content.rowsOf(o.id)).toBe(1);

    const denied = await sub.client.put('/api/user/content-search-preference', { optOut: true });
    expect(denied.status).toBe(403);
    expect(await json(await sub.client.get('/api/user/content-search-preference'))).toEqual({ available: true, optOut: false });

    const res = await o.client.put('/api/user/content-search-preference', { optOut: true });
    expect(await json(res)).toEqual({ available: true, optOut: true });
    expect(content.rowsOf(o.id)).toBe(0);
    expect(inText(await search(o.client, 'okapi'))).toEqual([]);
    await upload(sub.client, 'more.txt', 'another okapi');
    await indexed();
    expect(content.rowsOf(o.id)).toBe(0);

    await o.client.put('/api/user/content-search-preference', { optOut: false });
    await eventually(async () => expect(inText(await search(o.client, 'okapi'))).toHaveLength(2), { timeoutMs: 30_000 });
  }, 60_000);
});

describe('turning it off', () => {
  test('deletes the whole index; a change made outside the routes (the CLI) is followed within seconds, backfill included', async () => {
    await setEnabled(true);
    const o = await seed.owner(t);
    await upload(o.client, 'keep.txt', 'a note about quokkas');
    await indexed();
    expect(content.progress().indexed).toBeGreaterThan(0);
    expect(await setEnabled(false)).toEqual({ enabled: false, indexed: 0, pending: 0, textBytes: 0 });
    expect(t.server.ctx.db.$client.query('SELECT count(*) AS n FROM content_fts').get()).toEqual({ n: 0 });
    expect(await search(o.client, 'quokkas')).toEqual([]);

    // As `coffer settings set contentSearch true` does: the setting row only, written by another connection.
    const cli = new Database(t.server.ctx.paths.database);
    try {
      const set = (value: string) => cli.run(`UPDATE settings SET value = ? WHERE key = 'contentSearch'`, [value]);
      set('true');
      await eventually(async () => expect(inText(await search(o.client, 'quokkas'))).toHaveLength(1), { timeoutMs: 60_000 });
      set('false');
      await eventually(() => content.progress().indexed === 0, { timeoutMs: 60_000 });
    } finally {
      cli.close();
    }
  }, 150_000);
});
