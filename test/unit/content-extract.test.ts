import { describe, expect, test } from 'bun:test';
import path from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { kindOf } from '../../src/services/search/document-kind.ts';
import { capText, extractText, htmlText, xmlText } from '../../src/services/search/extract.ts';
import { Extractor, type Extraction, ExtractorPool } from '../../src/services/search/extractor.ts';
import { TextChannels, type TextSink } from '../../src/services/search/text-channels.ts';
import { eventually } from '../helpers/eventually.ts';
import { startedSince, threadCpuMs, workerThreads } from '../helpers/threads.ts';
import { indexedBytes, indexedText, matchExpression, snippetHtml } from '../../src/services/search/text.ts';
import { hostile, searchable } from '../helpers/search-documents.ts';

const limits = { maxTextBytes: 1024 ** 2 };
// A 24 MiB part of plain XML: under every ZIP cap, yet its extraction takes a while and holds a few hundred MiB for a moment.
const largeDocx = () =>
  zipSync(
    { 'word/document.xml': strToU8(`<w:document>${'<w:p><w:t>some words of text</w:t></w:p>'.repeat(680_000)}</w:document>`) },
    { level: 0 },
  );
const enc = (s: string) => new TextEncoder().encode(s);

// The sink the server's index writer is, in this thread: each extraction's text read back from the channel it came through.
const channels = new TextChannels();
let nextChannel = 1;
const sink: TextSink = {
  attach: (port) => {
    const channel = nextChannel++;
    channels.open(channel, port);
    return channel;
  },
  detach: (channel, lastJob) => channels.detach(channel, lastJob),
};
async function read(extraction: Promise<Extraction>): Promise<{ text: Uint8Array } | { failed: string; overLimit?: true }> {
  const r = await extraction;
  if (!('text' in r)) return r;
  return { text: r.text.bytes > 0 ? await channels.take(r.text) : new Uint8Array(0) };
}

describe('extraction', () => {
  test('kinds by content first: a PDF or a ZIP under any name, text without NUL, binary refused', () => {
    expect(kindOf('notes', enc('%PDF-1.7'))).toBe('pdf');
    expect(kindOf('x.docx', enc('PK\x03\x04'))).toBe('docx');
    expect(kindOf('x.zip', enc('PK\x03\x04'))).toBeNull();
    expect(kindOf('Makefile', enc('all:\n\techo é'))).toBe('text');
    expect(kindOf('a.htm', enc('<p>x</p>'))).toBe('html');
    expect(kindOf('a.txt', new Uint8Array([0x66, 0, 0x67]))).toBeNull();
    expect(kindOf('a.txt', new Uint8Array([0xff, 0xfe, 0xfd]))).toBeNull();
  });

  test('XML nested past 256 levels is hostile; entities are decoded but never expanded from a DTD', () => {
    expect(() => xmlText('<a>'.repeat(300), { breaks: new Set() })).toThrow('nested too deeply');
    expect(xmlText('<!DOCTYPE x [<!ENTITY e "boom">]><p>&e; &amp; &#233;</p>', { breaks: new Set(['p']) })).toBe('&e; & é\n');
  });

  test('HTML: scripts, styles and comments are not text', () => {
    expect(htmlText('<style>a{}</style><!-- hidden --><script>x()</script><p>A &lt;b&gt;</p>').trim()).toBe('A <b>');
  });

  test('blank space collapses to one space, line breaks stay single, lone spaces and line breaks as they were', async () => {
    const text = 'a  b\t c\r\nd \n\n  e\u00a0f\u3000 g\nh i';
    expect(await extractText('notes.txt', enc(text), limits)).toBe('a b c\nd\ne f g\nh i');
    expect(await extractText('page.html', enc(`<p>x &amp;  y</p>\n\n<p>z</p>`), limits)).toBe('x & y\nz');
  });

  test('text is cut on a character boundary', () => {
    expect(capText('ééé', 5)).toBe('éé');
  });

  test('a deeply nested DOCX that compresses poorly still gives no text', async () => {
    const { strToU8, zipSync } = await import('fflate');
    // Random attribute values keep the ratio low, so the XML depth cap (not the ZIP ratio cap) stops it.
    const deep = Array.from({ length: 400 }, (_, i) => `<w:p r="${Math.random().toString(36)}${i}">`).join('');
    const doc = zipSync({ 'word/document.xml': strToU8(`<w:document>${deep}words</w:document>`) }, { level: 0 });
    await expect(extractText('deep.docx', doc, limits)).rejects.toThrow('nested too deeply');
    await expect(extractText('bomb.docx', hostile.zipBomb(), limits)).rejects.toThrow('inflates past its caps');
  }, 120_000);

  test('a PDF is read a page at a time, up to 1,000 pages or the text cap: 8,000 pages drawing one stream stay small', async () => {
    const pages = await extractText('pages.pdf', searchable.pdfPages(Array.from({ length: 1001 }, (_, i) => `pageword${i + 1}`)), limits);
    expect(pages.split('\n').at(-1)).toBe('pageword1000');
    // In a process of its own, so its peak memory is the extraction's: every page at once took 4 GiB, one at a time about 150 MiB.
    const script = `
      const { extractText } = await import(${JSON.stringify(path.join(import.meta.dir, '../../src/services/search/extract.ts'))});
      const { hostile } = await import(${JSON.stringify(path.join(import.meta.dir, '../helpers/search-documents.ts'))});
      const text = await extractText('shared.pdf', hostile.sharedStreamPdf(), { maxTextBytes: ${limits.maxTextBytes} });
      const peak = /VmHWM:\\s*(\\d+) kB/.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'))[1];
      console.log(JSON.stringify({ bytes: Buffer.byteLength(text), peakMiB: Number(peak) / 1024 }));`;
    const run = Bun.spawnSync([process.execPath, '-e', script], { stderr: 'inherit' });
    const { bytes, peakMiB } = JSON.parse(run.stdout.toString());
    expect(bytes).toBe(limits.maxTextBytes);
    expect(peakMiB).toBeLessThan(768);
  }, 120_000);

  test('a DOCX whose parts say size 0 (data descriptors) is held to the ratio of the bytes read', async () => {
    await expect(extractText('streamed.docx', hostile.descriptorBomb(), limits)).rejects.toThrow('inflates past its caps');
  }, 60_000);

  test('a DOCX part whose local header misstates its size inflates to the same text, held to the same caps', async () => {
    const words = Array.from({ length: 20_000 }, (_, i) => `word${i % 997}`).join(' ');
    const honest = zipSync({ 'word/document.xml': strToU8(`<w:document><w:p><w:t>${words}</w:t></w:p></w:document>`) });
    const withSize = (size: number) => {
      const doc = honest.slice();
      // The first local header's uncompressed size (offset 22), which the inflate sizes its output buffer by.
      new DataView(doc.buffer).setUint32(22, size, true);
      return doc;
    };
    expect(await extractText('a.docx', honest, limits)).toBe(words);
    expect(await extractText('small.docx', withSize(10), limits)).toBe(words);
    expect(await extractText('large.docx', withSize(0x7fff_ffff), limits)).toBe(words);
    const bomb = hostile.zipBomb();
    new DataView(bomb.buffer).setUint32(22, 100, true);
    await expect(extractText('bomb.docx', bomb, limits)).rejects.toThrow('inflates past its caps');
  }, 120_000);

  test('each office format gives its words, runs joined', async () => {
    expect(await extractText('a.docx', searchable.docx('Radiator leaks'), limits)).toBe('Radiator leaks');
    expect(await extractText('a.pptx', searchable.pptx('One', 'Two'), limits)).toBe('One\nTwo');
    expect(await extractText('a.pdf', searchable.pdf('Boiler repair'), limits)).toBe('Boiler repair');
  });
});

describe('extraction worker', () => {
  test('markup that never closes is read in one pass: 420 KB of `<script`, a DOCX of `<a<b<c…`; the worker runs niced', async () => {
    // Bounded by the worker's CPU, not the wall clock: in a loaded CI run a niced thread waits its turn (quadratic took minutes).
    const extractor = new Extractor({ timeoutMs: 50_000, maxTextBytes: limits.maxTextBytes, maxMemoryBytes: 512 * 1024 ** 2 }, sink);
    const before = workerThreads();
    const cpuMs = new Map<string, number>();
    let started = new Map<string, number>();
    const sample = () => {
      for (const tid of startedSince(before).keys()) cpuMs.set(tid, threadCpuMs(tid));
    };
    try {
      const page = enc(`<p>before</p>${'<script'.repeat(60_000)}`);
      expect(await read(extractor.extract('page.html', page))).toEqual({ text: enc('before') });
      sample();
      const letters = Array.from({ length: 200_000 }, (_, i) => `<${String.fromCharCode(97 + (i % 26))}`).join('');
      const docx = zipSync({ 'word/document.xml': strToU8(`<w:document><w:t>opening</w:t>${letters}`) });
      const result = await read(extractor.extract('letters.docx', docx));
      expect('text' in result && new TextDecoder().decode(result.text).startsWith('opening<a<b<c')).toBe(true);
      sample();
    } finally {
      started = startedSince(before);
      extractor.kill();
    }
    // The extractor's thread is the one its kill ends; another suite's worker in this process may have started meanwhile.
    await eventually(() => expect([...started.keys()].filter((tid) => !workerThreads().has(tid)).length).toBe(1));
    const [mine] = [...started].filter(([tid]) => !workerThreads().has(tid));
    const [tid, nice] = mine!;
    expect(nice).toBe(10);
    expect(cpuMs.get(tid)).toBeLessThan(3_000);
  }, 60_000);
});

describe('extraction pool', () => {
  test('documents given at once run in as many workers: a small one is not kept waiting behind a large one', async () => {
    const pool = new ExtractorPool(2, { timeoutMs: 60_000, maxTextBytes: limits.maxTextBytes, maxMemoryBytes: 2 * 1024 ** 3 }, sink);
    const before = workerThreads();
    const order: string[] = [];
    try {
      const settled = (name: string) => (r: Extraction) => {
        order.push(name);
        return r;
      };
      const large = pool.extract('large.docx', largeDocx()).then(settled('large'));
      const small = pool.extract('small.txt', enc('first words')).then(settled('small'));
      expect(await read(small)).toEqual({ text: enc('first words') });
      expect(startedSince(before).size).toBeGreaterThanOrEqual(2);
      const result = await read(large);
      expect('text' in result && new TextDecoder().decode(result.text).startsWith('some words of text')).toBe(true);
      expect(order).toEqual(['small', 'large']);
    } finally {
      pool.kill();
    }
    await eventually(() => expect(startedSince(before).size).toBe(0));
  }, 60_000);
});

/** An extractor whose documents end when the test says: each call's name, and a way to answer it. */
function heldExtractor(log: string[], answers: Map<string, (r: Extraction) => void>) {
  let busy = 0;
  return {
    get busy() {
      return busy;
    },
    kill() {},
    extract(name: string, bytes: Uint8Array) {
      busy++;
      log.push(`start ${name} ${new TextDecoder().decode(bytes)}`);
      return new Promise<Extraction>((resolve) => {
        answers.set(name, (r) => {
          busy--;
          log.push(`end ${name}`);
          resolve(r);
        });
      });
    },
  };
}

describe('extraction pool limits', () => {
  const overMemory: Extraction = { failed: 'extraction needed more than 64 MiB of memory', overLimit: true };
  const text: Extraction = { text: { channel: 1, job: 1, bytes: 0 } };

  test('a document that met a limit while another ran beside it is extracted again alone: after the other, before any new one', async () => {
    const log: string[] = [];
    const answers = new Map<string, (r: Extraction) => void>();
    const pool = new ExtractorPool(2, { timeoutMs: 1, maxTextBytes: 1, maxMemoryBytes: 1 }, sink, () => heldExtractor(log, answers));
    const small = pool.extract('small.txt', enc('first'), async () => enc('again'));
    const large = pool.extract('large.docx', enc('large'));
    await Bun.sleep(0);
    answers.get('small.txt')!(overMemory);
    await Bun.sleep(0);
    const next = pool.extract('next.txt', enc('next'));
    await Bun.sleep(0);
    expect(log).toEqual(['start small.txt first', 'start large.docx large', 'end small.txt']);
    answers.get('large.docx')!(text);
    await eventually(() => expect(log.at(-1)).toBe('start small.txt again'));
    answers.get('small.txt')!(text);
    expect(await small).toEqual(text);
    await eventually(() => expect(log.at(-1)).toBe('start next.txt next'));
    answers.get('next.txt')!(text);
    expect(await next).toEqual(text);
    expect(await large).toEqual(text);
  });

  test('one that met a limit alone, or failed otherwise, is not tried again', async () => {
    const log: string[] = [];
    const answers = new Map<string, (r: Extraction) => void>();
    const pool = new ExtractorPool(2, { timeoutMs: 1, maxTextBytes: 1, maxMemoryBytes: 1 }, sink, () => heldExtractor(log, answers));
    const alone = pool.extract('alone.docx', enc('a'), async () => enc('again'));
    await Bun.sleep(0);
    answers.get('alone.docx')!(overMemory);
    expect(await alone).toEqual(overMemory);
    const broken = pool.extract('broken.docx', enc('b'), async () => enc('again'));
    const beside = pool.extract('beside.txt', enc('c'));
    await Bun.sleep(0);
    answers.get('broken.docx')!({ failed: 'not a document' });
    expect(await broken).toEqual({ failed: 'not a document' });
    answers.get('beside.txt')!(text);
    await beside;
    expect(log.filter((l) => l.includes('again'))).toEqual([]);
  });
});

describe('extraction worker memory', () => {
  test('the worker is ended after a document that left its heap large, kept after a small one', async () => {
    const extractor = new Extractor({ timeoutMs: 60_000, maxTextBytes: limits.maxTextBytes, maxMemoryBytes: 2 * 1024 ** 3 }, sink);
    const before = workerThreads();
    try {
      expect(await read(extractor.extract('small.txt', enc('a few words')))).toEqual({ text: enc('a few words') });
      await Bun.sleep(100); // a worker that is kept stays: nothing to wait for
      const [kept] = [...startedSince(before).keys()];
      expect(kept).toBeDefined();
      const result = await read(extractor.extract('big.docx', largeDocx()));
      expect('text' in result && new TextDecoder().decode(result.text).startsWith('some words of text')).toBe(true);
      await eventually(() => expect(workerThreads().has(kept!)).toBe(false));
    } finally {
      extractor.kill();
    }
  }, 60_000);

  test('a worker left without a document for idleMs is ended, and the next document starts another', async () => {
    const extractor = new Extractor(
      { timeoutMs: 60_000, maxTextBytes: limits.maxTextBytes, maxMemoryBytes: 2 * 1024 ** 3, idleMs: 300 },
      sink,
    );
    const before = workerThreads();
    try {
      expect(await read(extractor.extract('a.txt', enc('first words')))).toEqual({ text: enc('first words') });
      const [first] = [...startedSince(before).keys()];
      expect(first).toBeDefined();
      await eventually(() => expect(workerThreads().has(first!)).toBe(false));
      const beforeSecond = workerThreads();
      expect(await read(extractor.extract('b.txt', enc('second words')))).toEqual({ text: enc('second words') });
      // Another suite's worker in this process may start meanwhile: the extractor's own is the one its kill ends.
      const started = startedSince(beforeSecond);
      extractor.kill();
      await eventually(() => expect([...started.keys()].filter((tid) => !workerThreads().has(tid)).length).toBe(1));
    } finally {
      extractor.kill();
    }
  }, 60_000);

  test('a document during which the process grows past maxMemoryBytes has its worker terminated', async () => {
    const extractor = new Extractor({ timeoutMs: 60_000, maxTextBytes: limits.maxTextBytes, maxMemoryBytes: 64 * 1024 ** 2 }, sink);
    const before = workerThreads();
    try {
      expect(await read(extractor.extract('big.docx', largeDocx()))).toEqual({
        failed: 'extraction needed more than 64 MiB of memory',
        overLimit: true,
      });
      await eventually(() => expect(startedSince(before).size).toBe(0));
      expect(await read(extractor.extract('small.txt', enc('still reads')))).toEqual({ text: enc('still reads') });
    } finally {
      extractor.kill();
    }
    // The ended worker's channel and the next one's are let go, no text left behind in either.
    expect(channels.openChannels).toBe(0);
    expect(channels.held).toBe(0);
  }, 60_000);
});

describe('queries and snippets', () => {
  test('every term is quoted, so operators are words; a trailing * is a prefix; CJK becomes a phrase of characters', () => {
    expect(matchExpression('boiler "heat pump" inv* NOT')).toBe('"boiler" "heat pump" "inv"* "NOT"');
    expect(matchExpression('*** "" ()')).toBeNull();
    expect(matchExpression('東京')).toBe('"\u200B東\u200B\u200B京\u200B"');
  });

  test("the worker's UTF-8 is indexedText's, whether the text is ASCII or not", () => {
    const texts = ['plain ASCII words', '', 'café', 'x\u200By 日本', 'a\uE000b\uE001c', 'lone \uD800 surrogate', 'emoji 😀 here', 'ÿ'];
    // Random mixes of ASCII, Latin-1, CJK, the snippet markers, the CJK separator and a lone high surrogate.
    const unit = () => [0x20 + Math.floor(Math.random() * 95), 0xe9, 0x65e5, 0xe000, 0x200b, 0xd83d][Math.floor(Math.random() * 6)]!;
    for (let i = 0; i < 2000; i++) texts.push(String.fromCharCode(...Array.from({ length: 1 + (i % 40) }, unit)));
    for (const text of texts) expect(indexedBytes(text)).toEqual(new TextEncoder().encode(indexedText(text)));
  });

  test('snippets: the document escaped, only the match marked, the CJK separators gone', () => {
    expect(snippetHtml(`<script>\uE000boiler\uE001 & ${indexedText('東京')}`)).toBe('&lt;script&gt;<mark>boiler</mark> &amp; 東京');
    expect(indexedText('a\uE000b')).toBe('ab');
    expect(indexedText('plain ASCII, é and \u2000')).toBe('plain ASCII, é and \u2000');
    expect(indexedText('x\u200By 日本')).toBe('xy \u200B日\u200B\u200B本\u200B');
  });
});
