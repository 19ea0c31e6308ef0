import { describe, expect, test } from 'bun:test';
import { createHash, randomBytes } from 'node:crypto';
import { readMultipart, TEXT_BUDGET_BASE, TEXT_BUDGET_MAX, TEXT_BUDGET_PER_FILE } from '../../src/http/multipart.ts';
import { AppError, Messages } from '../../src/errors.ts';

const B = 'XyZ-boundary';
const CT = `multipart/form-data; boundary=${B}`;

/**
 * A request whose body arrives as exactly these chunks, each in a buffer of its own as the runtime
 * delivers them (the parser frees them); `pulls` counts what the parser asked for, `sent` is what it got.
 */
function request(chunks: Uint8Array[], contentType = CT) {
  let next = 0;
  const stats = { pulls: 0, sent: [] as Uint8Array[] };
  const body = new ReadableStream<Uint8Array>(
    {
      pull(c) {
        stats.pulls++;
        if (next < chunks.length) {
          const chunk = new Uint8Array(chunks[next++]!);
          stats.sent.push(chunk);
          c.enqueue(chunk);
        } else c.close();
      },
    },
    { highWaterMark: 0 },
  );
  return {
    req: new Request('http://localhost/upload', {
      method: 'POST',
      headers: { 'content-type': contentType },
      body,
      duplex: 'half',
    } as RequestInit),
    stats,
  };
}

function split(body: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < body.length; i += size) out.push(body.slice(i, i + size));
  return out;
}

const enc = (text: string) => Buffer.from(text, 'latin1');
const fileHead = (name: string, filename: string, type?: string) =>
  `--${B}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\n${type ? `Content-Type: ${type}\r\n` : ''}\r\n`;
const fieldPart = (name: string, value: string) => `--${B}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;

/** Every part as text (file bodies as length and hash), then OK or the error's status and message. */
async function transcript(chunks: Uint8Array[], contentType = CT): Promise<string[]> {
  const { req } = request(chunks, contentType);
  const out: string[] = [];
  try {
    for await (const part of readMultipart(req)) {
      if (part.kind === 'field') out.push(`field ${part.name}=${JSON.stringify(part.value)}`);
      else {
        const hash = createHash('sha256');
        let n = 0;
        for await (const chunk of part.body) {
          hash.update(chunk);
          n += chunk.byteLength;
        }
        out.push(`file ${part.field} ${JSON.stringify(part.filename)} ${part.mimeType} ${n} ${hash.digest('hex').slice(0, 12)}`);
      }
    }
    out.push('OK');
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    out.push(`${err.status} ${err.message}`);
  }
  return out;
}

const sha = (data: Uint8Array) => createHash('sha256').update(data).digest('hex').slice(0, 12);
const MALFORMED = `400 ${Messages.malformedMultipart}`;

// Contents that look like parts of a delimiter: CRs, LFs, dashes and a boundary missing its CRLF or last letter.
const TRICKY = `a\r\r\n\r\n-\r\n--X\r\n--${B.slice(0, -1)}\r\n-${B}--${B}\r`;

describe('multipart parser', () => {
  const body = enc(
    `preamble, ignored\r\n` +
      fieldPart('parentId', 'p1') +
      fileHead('file', 'one.txt', 'text/plain') +
      TRICKY +
      '\r\n' +
      fieldPart('lastModifiedTimes', '1700000000000') +
      fileHead('files[]', 'two.bin') +
      '\r\n\r\n' +
      `--${B}--\r\nepilogue, ignored\r\n--${B}\r\n`,
  );
  const expected = [
    'field parentId="p1"',
    `file file "one.txt" text/plain ${TRICKY.length} ${sha(enc(TRICKY))}`,
    'field lastModifiedTimes="1700000000000"',
    `file files[] "two.bin" text/plain 2 ${sha(enc('\r\n'))}`,
    'OK',
  ];

  test('reads fields and files in order; delimiter look-alikes inside a file stay data', async () => {
    expect(await transcript([body])).toEqual(expected);
  });

  test('a boundary split across chunks at every position gives the same parts', async () => {
    for (let at = 1; at < body.length; at++) {
      expect(await transcript([body.subarray(0, at), body.subarray(at)])).toEqual(expected);
    }
  });

  test('one byte per chunk, and chunks of every small size, give the same parts', async () => {
    for (let size = 1; size <= 80; size++) expect(await transcript(split(body, size))).toEqual(expected);
  });

  test('CRLF edge cases: a body that starts with the delimiter, a final boundary without CRLF, a boundary followed by junk', async () => {
    const noPreamble = enc(fileHead('file', 'a.txt') + 'x\r\n' + `--${B}--`);
    expect(await transcript([noPreamble])).toEqual([`file file "a.txt" text/plain 1 ${sha(enc('x'))}`, 'OK']);
    // A part whose delimiter is followed by anything but CRLF or `--` is skipped, as busboy does.
    const junk = enc(
      `--${B}xx\r\nContent-Disposition: form-data; name="file"; filename="skipped.txt"\r\n\r\nzz\r\n` +
        fileHead('file', 'kept.txt') +
        'k\r\n' +
        `--${B}--`,
    );
    expect(await transcript(split(junk, 3))).toEqual([`file file "kept.txt" text/plain 1 ${sha(enc('k'))}`, 'OK']);
    // An empty file and an empty field.
    const empty = enc(fileHead('file', 'e.txt') + '\r\n' + fieldPart('clientIds', '') + `--${B}--`);
    expect(await transcript([empty])).toEqual([`file file "e.txt" text/plain 0 ${sha(new Uint8Array())}`, 'field clientIds=""', 'OK']);
  });

  test('header rules follow busboy: folded lines, filename* in UTF-8, paths cut to the base name, octet-stream parts are files', async () => {
    const parts = enc(
      `--${B}\r\nContent-Disposition: form-data;\r\n name="file"; filename="fold.txt"\r\n\r\nf\r\n` +
        `--${B}\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''na%C3%AFve%20r%C3%A9sum%C3%A9.txt\r\n\r\nu\r\n` +
        fileHead('file', 'dir\\sub/evil.txt') +
        'e\r\n' +
        `--${B}\r\nContent-Disposition: form-data; name="blob"\r\nContent-Type: application/octet-stream\r\n\r\nb\r\n` +
        `--${B}\r\nContent-Disposition: form-data; name="latin"\r\nContent-Type: text/plain; charset=latin1\r\n\r\nd\xe9j\xe0\r\n` +
        `--${B}\r\nContent-Type: text/plain\r\n\r\nno disposition: skipped\r\n` +
        `--${B}\r\nContent-Disposition: attachment; name="x"\r\n\r\nnot form-data: skipped\r\n` +
        `--${B}--`,
    );
    expect(await transcript(split(parts, 5))).toEqual([
      `file file "fold.txt" text/plain 1 ${sha(enc('f'))}`,
      `file file "naïve résumé.txt" text/plain 1 ${sha(enc('u'))}`,
      `file file "evil.txt" text/plain 1 ${sha(enc('e'))}`,
      `file blob "" application/octet-stream 1 ${sha(enc('b'))}`,
      'field latin="déjà"',
      'OK',
    ]);
  });

  test('many small parts', async () => {
    let text = '';
    for (let i = 0; i < 3000; i++) text += i % 10 === 0 ? fileHead('files[]', `f${i}.txt`) + `${i}\r\n` : fieldPart('clientIds', `c${i}`);
    const parts = await transcript(split(enc(text + `--${B}--\r\n`), 1000));
    expect(parts).toHaveLength(3001);
    expect(parts[0]).toBe(`file files[] "f0.txt" text/plain 1 ${sha(enc('0'))}`);
    expect(parts[2999]).toBe('field clientIds="c2999"');
    expect(parts[3000]).toBe('OK');
  });

  test('field values are cut at 64 KiB and fields past the 20,000th are ignored, as busboy’s limits were set', async () => {
    const long = enc(fieldPart('clientIds', 'v'.repeat(70_000)) + `--${B}--`);
    expect(await transcript(split(long, 4096))).toEqual([`field clientIds=${JSON.stringify('v'.repeat(64 * 1024))}`, 'OK']);
    let many = '';
    for (let i = 0; i < 20_001; i++) many += fieldPart('f', String(i));
    const parts = await transcript([enc(many + `--${B}--`)]);
    expect(parts).toHaveLength(20_001);
    expect(parts[19_999]).toBe('field f="19999"');
  });

  test('text fields past the form’s budget are a 413 at once, before the rest of the body is read (issue 13, defect 2)', async () => {
    const value = 'v'.repeat(64 * 1024);
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < 200; i++) chunks.push(enc(fieldPart('relativePaths', value)));
    chunks.push(enc(`--${B}--`));
    const { req, stats } = request(chunks);
    let err: unknown = null;
    let fields = 0;
    try {
      for await (const part of readMultipart(req)) if (part.kind === 'field') fields++;
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(413);
    expect((err as AppError).message).toBe(
      `Too much text in the form: the fields besides the files may add up to at most ${TEXT_BUDGET_BASE} bytes in one request`,
    );
    // 1 MiB of 64 KiB fields: the 16th is refused while it arrives; nothing past it is read.
    expect(fields).toBe(15);
    expect(stats.pulls).toBe(16);
  });

  test('the budget grows with the file parts, up to its cap: a bulk upload’s paths fit before or after its files', async () => {
    const path = 'p'.repeat(900);
    let fieldsFirst = '';
    for (let i = 0; i < 1000; i++) fieldsFirst += fieldPart('relativePaths', `${i}/${path}`);
    for (let i = 0; i < 1000; i++) fieldsFirst += `${fileHead('files', `f${i}.txt`)}x\r\n`;
    const ok = await transcript([enc(fieldsFirst + `--${B}--`)]);
    expect(ok.at(-1)).toBe('OK');
    expect(ok).toHaveLength(2001);

    // 100 files earn 100 × 16 KiB more; past the cap nothing more is allowed, however many files came.
    let grown = '';
    for (let i = 0; i < 100; i++) grown += `${fileHead('files', `f${i}.txt`)}x\r\n`;
    const room = TEXT_BUDGET_BASE + 100 * TEXT_BUDGET_PER_FILE;
    expect(room).toBeGreaterThan(2 * TEXT_BUDGET_BASE);
    for (let i = 0; i < Math.floor(room / 65_000) - 1; i++) grown += fieldPart('clientIds', 'c'.repeat(65_000 - 9));
    expect((await transcript([enc(grown + `--${B}--`)])).at(-1)).toBe('OK');

    let capped = '';
    for (let i = 0; i < 2000; i++) capped += `${fileHead('files', `f${i}.txt`)}x\r\n`;
    for (let i = 0; i <= TEXT_BUDGET_MAX / 65_000; i++) capped += fieldPart('clientIds', 'c'.repeat(65_000 - 9));
    expect((await transcript([enc(capped + `--${B}--`)])).at(-1)).toBe(
      `413 Too much text in the form: the fields besides the files may add up to at most ${TEXT_BUDGET_MAX} bytes in one request`,
    );
  });

  test('a part larger than any chunk streams through as views of the request’s chunks, never read ahead', async () => {
    const head = enc(fileHead('file', 'big.bin'));
    const data = randomBytes(3 * 1024 * 1024 + 17);
    // The fifth chunk ends with a CR, which may begin a delimiter.
    data[5 * 64 * 1024 - 1 - head.length] = 13;
    const whole = Buffer.concat([head, data, enc(`\r\n--${B}--\r\n`)]);
    const chunks = split(whole, 64 * 1024);
    const { req, stats } = request(chunks);
    const parts = readMultipart(req);
    const first = await parts.next();
    const part = first.value!;
    if (part.kind !== 'file') throw new Error('expected a file part');
    const received: Uint8Array[] = [];
    let pending = 0;
    for await (const chunk of part.body) {
      // Backpressure: at most the chunk being delivered has been pulled beyond what was handed on.
      expect(stats.pulls).toBeLessThanOrEqual(received.length + 2);
      // File data is never copied, but for the few bytes at a chunk's end that might begin a delimiter.
      expect(stats.sent.some((c) => c.buffer === chunk.buffer) || chunk.byteLength < `\r\n--${B}`.length).toBe(true);
      // Copied: a chunk is valid only until the next one is asked for.
      received.push(Buffer.from(chunk));
      pending += chunk.byteLength;
    }
    expect(pending).toBe(data.length);
    expect(Buffer.concat(received).equals(data)).toBe(true);
    expect((await parts.next()).done).toBe(true);
  });

  test('a request chunk is freed once its data is handed on and the next is asked for, not at the next GC', async () => {
    const head = enc(fileHead('file', 'big.bin'));
    const data = randomBytes(1024 * 1024);
    const chunks = split(Buffer.concat([head, data, enc(`\r\n--${B}--\r\n`)]), 64 * 1024);
    const { req, stats } = request(chunks);
    const received: Buffer[] = [];
    for await (const part of readMultipart(req)) {
      if (part.kind !== 'file') continue;
      let previous: Uint8Array | null = null;
      for await (const chunk of part.body) {
        // A chunk's last bytes that might begin a delimiter come as a small copy of their own, which is not a request chunk.
        const fromRequest = previous !== null && stats.sent.some((c) => c.buffer === previous!.buffer);
        if (fromRequest && previous!.buffer !== chunk.buffer) expect(previous!.byteLength).toBe(0);
        received.push(Buffer.from(chunk));
        previous = chunk;
      }
    }
    expect(Buffer.concat(received).equals(data)).toBe(true);
    expect(stats.sent.length).toBe(chunks.length);
    expect(stats.sent.every((c) => c.byteLength === 0)).toBe(true);
  });

  test('a file part left unread is skipped, and the next part still arrives', async () => {
    const body = enc(fileHead('file', 'left.bin') + 'x'.repeat(200_000) + '\r\n' + fieldPart('after', 'yes') + `--${B}--`);
    const { req } = request(split(body, 1000));
    const seen: string[] = [];
    for await (const part of readMultipart(req)) seen.push(part.kind === 'field' ? `${part.name}=${part.value}` : `file ${part.filename}`);
    expect(seen).toEqual(['file left.bin', 'after=yes']);
  });

  test('a missing final boundary and other malformed bodies are 400s; parts complete before the fault come first', async () => {
    // No final boundary: mid-file, after a whole part, inside headers, nothing at all, a final boundary cut short.
    const midFile = await transcript(split(enc(fieldPart('a', '1') + fileHead('file', 't.txt') + 'hello wor'), 4));
    expect(midFile).toEqual(['field a="1"', MALFORMED]);
    expect(await transcript([enc(fileHead('file', 't.txt') + 'done\r\n')])).toEqual([MALFORMED]);
    expect(await transcript([enc(`--${B}\r\nContent-Disposition: form-data; name="file"; filen`)])).toEqual([MALFORMED]);
    expect(await transcript([enc('no boundary in here')])).toEqual([MALFORMED]);
    expect(await transcript([])).toEqual([MALFORMED]);
    expect(await transcript([enc(fileHead('file', 'f.txt') + 'x\r\n' + `--${B}-`)])).toEqual([
      `file file "f.txt" text/plain 1 ${sha(enc('x'))}`,
      MALFORMED,
    ]);
    // Header syntax: no colon, LF-only lines, no header at all, a header block over 16 KiB.
    expect(await transcript([enc(`--${B}\r\nContent-Disposition form-data\r\n\r\nx\r\n--${B}--`)])).toEqual([MALFORMED]);
    expect(await transcript([enc(`--${B}\nContent-Disposition: form-data; name="f"\n\nx\n--${B}--`)])).toEqual([MALFORMED]);
    expect(await transcript([enc(`--${B}\r\n\r\nx\r\n--${B}--`)])).toEqual([MALFORMED]);
    expect(
      await transcript([enc(`--${B}\r\nContent-Disposition: form-data; name="f"\r\nX-Pad: ${'p'.repeat(17_000)}\r\n\r\nx\r\n--${B}--`)]),
    ).toEqual([MALFORMED]);
    // The form closes while a file part's headers are still being read.
    expect(await transcript([enc(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\n--${B}--`)])).toEqual([
      MALFORMED,
    ]);
  });

  test('not multipart/form-data, or no boundary: 400 asking for multipart', async () => {
    const NOT = `400 ${Messages.notMultipart}`;
    expect(await transcript([enc('x')], 'text/plain')).toEqual([NOT]);
    expect(await transcript([enc('x')], 'multipart/form-data')).toEqual([NOT]);
    expect(await transcript([enc('x')], 'multipart/form-data-x; boundary=a')).toEqual([NOT]);
    expect(await transcript([enc(fileHead('file', 'q.txt') + 'q\r\n' + `--${B}--`)], `Multipart/Form-Data; Boundary="${B}"`)).toEqual([
      `file file "q.txt" text/plain 1 ${sha(enc('q'))}`,
      'OK',
    ]);
  });
});
