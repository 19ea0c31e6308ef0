import { PDFiumDocument, PDFiumModule, PDFiumPage } from '@hyzyla/pdfium';

/** pdfium's module, with the calls used here that the package's types leave out. */
export type Pdfium = Awaited<ReturnType<typeof PDFiumModule>> & {
  _FPDFFormObj_CountObjects(form: number): number;
  _FPDFFormObj_GetObject(form: number, index: number): number;
  _FPDFPage_GetAnnotCount(page: number): number;
  _FPDFPage_GetAnnot(page: number, index: number): number;
  _FPDFPage_CloseAnnot(annot: number): void;
  _FPDFAnnot_GetObjectCount(annot: number): number;
  _FPDFAnnot_GetObject(annot: number, index: number): number;
};

// FPDF_PAGEOBJ_IMAGE and FPDF_PAGEOBJ_FORM.
const IMAGE_OBJECT = 3;
const FORM_OBJECT = 5;

/** The most pdfium's heap may grow to for the document at hand, in bytes (see loadPdfium). */
export interface PdfHeap {
  limit: number;
}
// Beyond the file: pdfium, the page's parsed content and the 1,600 px bitmap (a page of 300,000 path segments needed over 64 MiB).
const PDF_HEAP_SLACK = 128 * 1024 * 1024;
// Each image drawing is decoded whole, at up to 4 bytes a pixel.
const BYTES_PER_DRAWN_PIXEL = 4;

// FPDF_GetLastError's codes, as the file's owner would read them.
const LOAD_ERRORS: Record<number, string> = {
  2: 'the PDF could not be opened',
  3: 'the file is not a PDF or is corrupted',
  4: 'the PDF needs a password',
  5: 'the PDF uses an unsupported security scheme',
};

/**
 * pdfium, its heap never grown past `heapLimit()` bytes: an allocation past it aborts the call (a content stream that
 * inflates to gigabytes stops there), and the module is unusable after, so its worker is replaced.
 */
export async function loadPdfium(wasmBinary: ArrayBuffer, heapLimit: () => number): Promise<Pdfium> {
  const pdfium = (await PDFiumModule({
    wasmBinary,
    // A locateFile that is never called keeps the loader from resolving a URL of its own (none in a worker).
    locateFile: () => '',
    // The loader's own instantiation, with the heap's growth (an import of the module) refused past the limit.
    instantiateWasm: (imports, done) => {
      const env = imports.env as { emscripten_resize_heap: (bytes: number) => number };
      const grow = env.emscripten_resize_heap;
      env.emscripten_resize_heap = (bytes) => (bytes >>> 0 > heapLimit() ? 0 : grow(bytes));
      // The loader's callback takes the instance, whatever the package's types say.
      void WebAssembly.instantiate(wasmBinary, imports).then(({ instance }) => done(instance as unknown as WebAssembly.Module));
      return {};
    },
  })) as Pdfium;
  pdfium._FPDF_InitLibraryWithConfig({ version: 2, m_pIsolate: null, m_pUserFontPaths: null, m_v8EmbedderSlot: 0, m_pPlatform: null });
  return pdfium;
}

/**
 * The first page of a PDF, refused when the images it draws (in its content, its forms and its annotations'
 * appearances, each drawing counted) have more than `maxPixels` in all: pdfium decodes each drawing whole (one
 * 400 MP image drawn ten times held a worker 47 s). `close` ends the document.
 */
export function openFirstPage(
  pdfium: Pdfium,
  bytes: Uint8Array,
  maxPixels: number,
  heap: PdfHeap,
): { page: PDFiumPage; close: () => void } {
  // Opening and parsing the page (its content streams inflated) gets the file's room and the slack; drawing, its images' too.
  heap.limit = bytes.length + PDF_HEAP_SLACK;
  const documentPtr = pdfium.wasmExports.malloc(bytes.length);
  pdfium.HEAPU8.set(bytes, documentPtr);
  const documentIdx = pdfium._FPDF_LoadMemDocument(documentPtr, bytes.length, 0);
  if (!documentIdx) {
    const code = pdfium._FPDF_GetLastError();
    pdfium.wasmExports.free(documentPtr);
    throw new Error(LOAD_ERRORS[code] ?? `the PDF could not be read (pdfium error ${code})`);
  }
  const document = new PDFiumDocument({ module: pdfium, documentIdx, documentPtr });
  const pageIdx = pdfium._FPDF_LoadPage(documentIdx, 0);
  try {
    if (!pageIdx) throw new Error('the PDF has no first page');
    const drawn = imagePixels(pdfium, pageIdx, maxPixels);
    if (drawn > maxPixels) throw new Error(`the first page draws images of more than ${maxPixels} pixels`);
    heap.limit += drawn * BYTES_PER_DRAWN_PIXEL;
  } catch (err) {
    if (pageIdx) pdfium._FPDF_ClosePage(pageIdx);
    document.destroy();
    throw err;
  }
  return { page: new PDFiumPage({ module: pdfium, pageIdx, documentIdx, document, pageIndex: 0 }), close: () => document.destroy() };
}

/** The pixels of every image drawing on `page`, counted until the sum passes `max`. */
function imagePixels(pdfium: Pdfium, page: number, max: number): number {
  const size = pdfium.wasmExports.malloc(8);
  let total = 0;
  const visit = (count: number, object: (index: number) => number) => {
    for (let i = 0; i < count && total <= max; i++) {
      const obj = object(i);
      const type = pdfium._FPDFPageObj_GetType(obj);
      if (type === IMAGE_OBJECT && pdfium._FPDFImageObj_GetImagePixelSize(obj, size, size + 4))
        total += (pdfium.HEAP32[size >> 2]! >>> 0) * (pdfium.HEAP32[(size >> 2) + 1]! >>> 0);
      else if (type === FORM_OBJECT) visit(pdfium._FPDFFormObj_CountObjects(obj), (j) => pdfium._FPDFFormObj_GetObject(obj, j));
    }
  };
  try {
    visit(pdfium._FPDFPage_CountObjects(page), (i) => pdfium._FPDFPage_GetObject(page, i));
    const annots = pdfium._FPDFPage_GetAnnotCount(page);
    for (let a = 0; a < annots && total <= max; a++) {
      const annot = pdfium._FPDFPage_GetAnnot(page, a);
      try {
        visit(pdfium._FPDFAnnot_GetObjectCount(annot), (j) => pdfium._FPDFAnnot_GetObject(annot, j));
      } finally {
        pdfium._FPDFPage_CloseAnnot(annot);
      }
    }
  } finally {
    pdfium.wasmExports.free(size);
  }
  return total;
}
