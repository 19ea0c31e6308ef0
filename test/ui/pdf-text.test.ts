import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { extractText } from '../../src/services/search/extract.ts';
import { ownPdfText } from '../../src/services/search/pdf-reader.ts';
import { acquireBrowser, releaseBrowser } from '../helpers/browser.ts';
import { indexTerms, pdfjsText } from '../helpers/pdf-producers.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await acquireBrowser();
});
afterAll(async () => {
  await releaseBrowser();
});

const para = (n: number) =>
  Array.from(
    { length: n },
    (_, i) => `<p>Paragraph ${i}: the office staff efficiently filed the fluffy waffles; the invoice was paid.</p>`,
  ).join('');

// Documents printed by Chromium as a person would: the reader must read each itself and give pdf.js's index terms.
const READ: Record<string, string> = {
  latin: `<h1>Café crème brûlée in Besançon</h1><p>Naïve façade, Zoë Ødegaard, Þórr, straße, œuvre, “quotes” — dashes – here.</p>${para(8)}`,
  'greek, cyrillic and central European':
    '<p>Ελληνικά κείμενα για δοκιμή.</p><p>Русский текст для поиска.</p><p>Zażółć gęślą jaźń. Příliš žluťoučký kůň.</p>',
  columns: `<div style="column-count:3">${para(20)}</div>`,
  spacing: `<p style="letter-spacing:0.3em">tracked letters</p><p style="word-spacing:2em">wide word spacing</p><p style="text-align:justify;width:200px">${'justified text that wraps across lines '.repeat(5)}</p><p>x<sup>2</sup> H<sub>2</sub>O</p>`,
  table: `<table border=1>${Array.from({ length: 30 }, (_, r) => `<tr>${Array.from({ length: 4 }, (_, c) => `<td>cell${r}x${c} ${r * c}</td>`).join('')}</tr>`).join('')}</table>`,
  'many pages': para(300),
};
// Documents it leaves to pdf.js (text drawn sideways, right-to-left text): extraction still gives pdf.js's terms.
const LEFT: Record<string, string> = {
  rotated: '<p>Upright.</p><div style="transform:rotate(90deg);width:300px;margin:100px">sideways words</div>',
  arabic: '<p dir="rtl">النص العربي للاختبار والبحث</p>',
};

async function print(body: string, landscape: boolean): Promise<Uint8Array> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.setContent(`<!doctype html><html><head><meta charset="utf-8"></head><body>${body}</body></html>`);
    return await page.pdf({ format: 'A4', landscape });
  } finally {
    await context.close();
  }
}

describe("PDFs printed by Chromium: the reader's index terms are pdf.js's", () => {
  for (const [name, body] of Object.entries(READ)) {
    test(name, async () => {
      for (const landscape of [false, true]) {
        const pdf = await print(body, landscape);
        expect(ownPdfText(pdf, 1024 ** 2, 1000)).not.toBeNull();
        expect(indexTerms(await extractText('a.pdf', pdf, { maxTextBytes: 1024 ** 2 }))).toEqual(indexTerms(await pdfjsText(pdf)));
      }
    }, 60_000);
  }
  for (const [name, body] of Object.entries(LEFT)) {
    test(`${name}: left to pdf.js`, async () => {
      const pdf = await print(body, false);
      expect(ownPdfText(pdf, 1024 ** 2, 1000)).toBeNull();
      expect(indexTerms(await extractText('a.pdf', pdf, { maxTextBytes: 1024 ** 2 }))).toEqual(indexTerms(await pdfjsText(pdf)));
    }, 60_000);
  }
});
