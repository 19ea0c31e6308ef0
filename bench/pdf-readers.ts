// `bun bench/pdf-readers.ts [--rounds N]`: Coffer's own PDF text reader against pdf.js, on PDFs from every producer
// this machine has: the search bench's and the tests' generators, Chromium's print to PDF (the test browser),
// Ghostscript (`ps2pdf` of groff's man pages) and pdfTeX when installed. For each document: whether the reader
// reads it or leaves it to pdf.js, and whether the index gets the same terms; then the CPU per document of each,
// the two taking turns in each round, median of the rounds, from the process's own counters.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ownPdfText } from '../src/services/search/pdf-reader.ts';
import { plainClone } from '../src/services/search/plain-clone.ts';
import { acquireBrowser, releaseBrowser } from '../test/helpers/browser.ts';
import { indexTerms, pdfjsText } from '../test/helpers/pdf-producers.ts';
import { searchable } from '../test/helpers/search-documents.ts';
import { flag } from './flags.ts';
import { makeDocument } from './search-docs.ts';
import { median } from './streams.ts';

// As the extraction worker runs pdf.js (extract-worker.ts).
globalThis.structuredClone = plainClone as typeof structuredClone;

const MAX_TEXT = 1024 ** 2;
const rounds = flag('rounds', 5);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-pdf-readers-'));
const corpus: { name: string; bytes: Uint8Array }[] = [];
const add = (name: string, bytes: Uint8Array) => corpus.push({ name, bytes });

for (const i of [0, 1, 2, 3]) add(`search bench ${i}`, makeDocument('pdf', i, 100 * 1024));
add('tests: searchable.pdf', searchable.pdf('the quick brown fox (jumps) over \\ the lazy dog '.repeat(60)));

const para = (n: number) =>
  Array.from(
    { length: n },
    (_, i) =>
      `<p>Paragraph ${i}: the office staff efficiently filed the fluffy waffles; the boiler pressure was checked and the invoice paid.</p>`,
  ).join('');
const pages: Record<string, string> = {
  latin: `<h1>Café crème brûlée in Besançon</h1><p>Naïve façade, Zoë Ødegaard, Þórr, straße, œuvre, “quotes” — dashes – here.</p>${para(10)}`,
  'greek and cyrillic': '<p>Ελληνικά κείμενα για δοκιμή αναζήτησης.</p><p>Русский текст для проверки поиска.</p>',
  european: '<p>¿Dónde está el niño? Zażółć gęślą jaźń. Příliš žluťoučký kůň. Türkçe: ığüşöç İstanbul.</p>',
  cjk: '<p>東京都の天気は晴れです。中文文本测试搜索功能。</p>',
  arabic: '<p dir="rtl">النص العربي للاختبار والبحث</p>',
  columns: `<div style="column-count:3">${para(30)}</div>`,
  rotated: '<p>Upright.</p><div style="transform:rotate(90deg);width:300px;margin:100px">sideways words</div>',
  spacing: `<p style="letter-spacing:0.3em">tracked letters</p><p style="word-spacing:2em">wide word spacing</p><p style="text-align:justify;width:200px">${'justified text that wraps across lines '.repeat(5)}</p><p>x<sup>2</sup> H<sub>2</sub>O</p>`,
  table: `<table border=1>${Array.from({ length: 40 }, (_, r) => `<tr>${Array.from({ length: 5 }, (_, c) => `<td>cell${r}x${c} ${r * c}</td>`).join('')}</tr>`).join('')}</table>`,
  'long (20 pages)': para(400),
  ligatures: '<p style="font-family:serif">office efficient fluffy affine waffle final flight</p>',
};
const browser = await acquireBrowser({ emulatedGpu: true });
const context = await browser.newContext();
const page = await context.newPage();
for (const [name, body] of Object.entries(pages)) {
  await page.setContent(`<!doctype html><html><head><meta charset="utf-8"></head><body>${body}</body></html>`);
  add(`Chromium: ${name}`, await page.pdf({ format: 'A4' }));
  add(`Chromium: ${name}, landscape`, await page.pdf({ format: 'A4', landscape: true }));
}
await context.close();
await releaseBrowser();

const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
if (has('ps2pdf') && has('groff')) {
  for (const man of ['tar', 'grep', 'ls', 'gzip', 'bash']) {
    const source = spawnSync('sh', ['-c', `ls /usr/share/man/man1/${man}.1*.gz 2>/dev/null | head -1`])
      .stdout.toString()
      .trim();
    if (!source) continue;
    const out = path.join(dir, `${man}.pdf`);
    spawnSync('sh', ['-c', `zcat ${source} | groff -man -Tps 2>/dev/null | ps2pdf - ${out}`]);
    if (fs.existsSync(out)) add(`Ghostscript: man ${man}`, fs.readFileSync(out));
  }
} else console.log('Ghostscript or groff not installed: no Ghostscript documents (apt-get install ghostscript)');
if (has('pdflatex')) {
  const body = `\\section{Office waffles}\nThe office staff efficiently filed the fluffy waffles. Na\\"ive caf\\'e owners offered cr\\\`eme br\\^ul\\'ee;
the invoice (number 42-17/B) was paid --- quickly -- and \`\`quoted'' words follow.\n${'Paragraph about the mortgage radiator contract and the difficult first flight. '.repeat(80)}`;
  const docs: Record<string, string> = {
    'two columns': `\\documentclass[twocolumn]{article}\\begin{document}${body}\\end{document}`,
    'with ToUnicode': `\\documentclass{article}\\input{glyphtounicode}\\pdfgentounicode=1\\begin{document}${body}\\end{document}`,
    math: `\\documentclass{article}\\begin{document}${body} $E = mc^2$ and $\\sum_{i=1}^n x_i$.\\end{document}`,
  };
  for (const [name, tex] of Object.entries(docs)) {
    const file = path.join(dir, `${name.replace(/\W/g, '')}.tex`);
    fs.writeFileSync(file, tex);
    spawnSync('pdflatex', ['-interaction=nonstopmode', `-output-directory=${dir}`, file], { stdio: 'ignore', timeout: 60_000 });
    const pdf = file.replace(/\.tex$/, '.pdf');
    if (fs.existsSync(pdf)) add(`pdfTeX: ${name}`, fs.readFileSync(pdf));
  }
} else console.log('pdflatex not installed: no pdfTeX documents (apt-get install texlive-latex-base)');

const tidy = (text: string) => text.replace(/\s\s+|[^\S \n]/g, (run) => (run.includes('\n') ? '\n' : ' ')).trim();
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

console.log('| document | reader | index terms | same as pdf.js |');
console.log('|---|---|---|---|');
const read: typeof corpus = [];
let differ = 0;
for (const doc of corpus) {
  const own = ownPdfText(doc.bytes, MAX_TEXT, 1000);
  const pdfjs = indexTerms(tidy(await pdfjsText(doc.bytes)));
  if (own === null) {
    console.log(`| ${doc.name} | pdf.js | ${pdfjs.length} | (pdf.js's) |`);
    continue;
  }
  read.push(doc);
  const mine = indexTerms(tidy(own));
  const same = mine.length === pdfjs.length && mine.every((t, i) => t === pdfjs[i]);
  if (!same) differ++;
  const only = (a: string[], b: string[]) => a.filter((t) => !b.includes(t)).slice(0, 8);
  console.log(
    `| ${doc.name} | own | ${mine.length} | ${same ? 'yes' : `NO: own only ${JSON.stringify(only(mine, pdfjs))}, pdf.js only ${JSON.stringify(only(pdfjs, mine))}`} |`,
  );
}
console.log(`\n${read.length} of ${corpus.length} documents read by the reader, ${differ} with other terms than pdf.js's`);

// CPU: the documents the reader reads, each reader in turn, per round.
const pdfjsMs: number[] = [];
const ownMs: number[] = [];
for (let r = 0; r < rounds + 1; r++) {
  let t = cpuMs();
  for (const doc of read) await pdfjsText(doc.bytes);
  const a = (cpuMs() - t) / read.length;
  t = cpuMs();
  for (const doc of read) ownPdfText(doc.bytes, MAX_TEXT, 1000);
  const b = (cpuMs() - t) / read.length;
  // The first round warms both up.
  if (r === 0) continue;
  pdfjsMs.push(a);
  ownMs.push(b);
}
const bench = corpus.filter((d) => d.name.startsWith('search bench'));
const benchMs = { pdfjs: [] as number[], own: [] as number[] };
for (let r = 0; r < rounds + 1; r++) {
  let t = cpuMs();
  for (const doc of bench) await pdfjsText(doc.bytes);
  const a = (cpuMs() - t) / bench.length;
  t = cpuMs();
  for (const doc of bench) ownPdfText(doc.bytes, MAX_TEXT, 1000);
  const b = (cpuMs() - t) / bench.length;
  if (r === 0) continue;
  benchMs.pdfjs.push(a);
  benchMs.own.push(b);
}
const fmt = (xs: number[]) => `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;
console.log(`\nCPU ms per document, median (range) of ${rounds} rounds, load average ${os.loadavg()[0]!.toFixed(1)}:`);
console.log(`  the ${read.length} documents the reader reads: pdf.js ${fmt(pdfjsMs)}, own ${fmt(ownMs)}`);
console.log(`  the search bench's ${bench.length} PDFs: pdf.js ${fmt(benchMs.pdfjs)}, own ${fmt(benchMs.own)}`);
fs.rmSync(dir, { recursive: true, force: true });
