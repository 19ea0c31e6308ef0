import { ZipArchive } from 'archiver';

/** A ZIP of the given entries, in order (stored, not deflated). */
async function zip(entries: Array<[name: string, text: string]>): Promise<Uint8Array> {
  const archive = new ZipArchive({ store: true });
  const chunks: Buffer[] = [];
  archive.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise((resolve) => archive.on('end', resolve));
  for (const [name, text] of entries) archive.append(Buffer.from(text), { name });
  await archive.finalize();
  await ended;
  return new Uint8Array(Buffer.concat(chunks));
}

const contentTypes = (part: string, type: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
  `<Override PartName="${part}" ContentType="${type}"/></Types>`;

/** The smallest office documents content detection recognises, carrying `text` so versions differ. */
export const documents = {
  docx: (text: string) =>
    zip([
      [
        '[Content_Types].xml',
        contentTypes('/word/document.xml', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml'),
      ],
      ['word/document.xml', `<w:document><w:t>${text}</w:t></w:document>`],
    ]),
  xlsx: (text: string) =>
    zip([
      [
        '[Content_Types].xml',
        contentTypes('/xl/workbook.xml', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml'),
      ],
      ['xl/workbook.xml', `<workbook><t>${text}</t></workbook>`],
    ]),
  odt: (text: string) =>
    zip([
      ['mimetype', 'application/vnd.oasis.opendocument.text'],
      ['content.xml', `<office:document-content><text:p>${text}</text:p></office:document-content>`],
    ]),
  pdf: (text: string) => new TextEncoder().encode(`%PDF-1.4\n1 0 obj\n<< /Title (${text}) >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n`),
  /** A Compound File header, which is what the old binary formats (doc, xls, ppt) are. */
  cfb: (text: string) =>
    new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, ...new Array(504).fill(0), ...new TextEncoder().encode(text)]),
};
