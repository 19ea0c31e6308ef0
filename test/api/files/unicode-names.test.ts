import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { listAll, upload } from '../../helpers/files.ts';
import { admin, owner, type SeededLogin } from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
let o: SeededLogin;
beforeAll(async () => {
  t = await startTestServer();
  await admin(t);
  o = await owner(t);
});
afterAll(() => t.stop());

const EMOJI = '\u{1f600}';

describe('names with astral characters and combining marks', () => {
  test('a numbered name shortened to fit the 100-character limit never cuts an emoji in half', async () => {
    // 99 UTF-16 units: " (1)" leaves room for 96, which fell in the middle of the 48th emoji.
    const name = `a${EMOJI.repeat(49)}`;
    await upload(o.client, name, 'first');
    const second = await upload(o.client, name, 'second');
    expect(second.name.isWellFormed()).toBe(true);
    expect(second.name).toBe(`a${EMOJI.repeat(47)} (1)`);
    const listed = (await listAll(o.client, '/api/files?limit=500')).map((i) => i.name);
    expect(listed).toContain(second.name);
  });

  test('a numbered name keeps a letter and its combining accent together', async () => {
    // NFC cannot compose q + U+0301: cutting between them would leave a bare q in the new name.
    const name = `${'x'.repeat(91)}q\u0301.txt`;
    await upload(o.client, name, 'first');
    const second = await upload(o.client, name, 'second');
    expect(second.name).toBe(`${'x'.repeat(91)} (1).txt`);
  });
});
