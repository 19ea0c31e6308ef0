import busboy from 'busboy';
import type { Readable } from 'node:stream';
import { AppError, badRequest, Messages, uploadAborted } from '../errors.ts';
import type { UploadFilePart, UploadPart } from '../services/uploads.ts';

const PART_BUFFER = 256 * 1024;

/**
 * A file part's bytes as an async iterable. Leaving the loop early does not destroy the part: the rest
 * is discarded, so the parser can go on to the next part (a destroyed part would stall it).
 */
async function* partBytes(stream: Readable): AsyncGenerator<Uint8Array> {
  let ended = false;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const signal = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const onEnd = () => {
    ended = true;
    signal();
  };
  const onError = (err: Error) => {
    failure = err;
    signal();
  };
  stream.on('readable', signal);
  stream.on('end', onEnd);
  stream.on('error', onError);
  try {
    for (;;) {
      let chunk: Buffer | null;
      while ((chunk = stream.read() as Buffer | null) !== null) yield chunk;
      if (failure) throw failure;
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    stream.off('readable', signal);
    stream.off('end', onEnd);
    stream.off('error', onError);
    if (!ended && !failure) stream.resume();
  }
}

/**
 * Streams a multipart/form-data request body as parts, in order, never buffering a file: a file part
 * must be read (or left) before the next part arrives. Call only after the route's guard has passed.
 * A client that hangs up surfaces as the 499 error, from the part being read or from the iteration.
 */
export async function* readMultipart(request: Request): AsyncGenerator<UploadPart> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\b/i.test(type) || !request.body) throw badRequest(Messages.notMultipart);
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': type },
      highWaterMark: PART_BUFFER,
      fileHwm: PART_BUFFER,
      defParamCharset: 'utf8',
      limits: { fieldSize: 64 * 1024, fieldNameSize: 200, fields: 20_000 },
    });
  } catch {
    throw badRequest(Messages.notMultipart);
  }
  const bb = parser;
  const queue: Array<UploadPart & { source?: Readable }> = [];
  let closed = false;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const signal = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const fail = (err: Error) => {
    failure ??= err;
    signal();
  };

  bb.on('field', (name, value) => {
    queue.push({ kind: 'field', name, value });
    signal();
  });
  bb.on('file', (field, stream, info) => {
    // Failures reach the reader through partBytes; a part nobody reads any more must not crash the process.
    stream.on('error', () => {});
    const part: UploadFilePart & { source: Readable } = { kind: 'file', field, filename: info.filename ?? '', mimeType: info.mimeType ?? '', body: partBytes(stream), source: stream };
    queue.push(part);
    signal();
  });
  bb.on('close', () => {
    closed = true;
    signal();
  });
  bb.on('error', () => fail(request.signal.aborted ? uploadAborted() : badRequest(Messages.malformedMultipart)));

  const reader = request.body.getReader();
  let pumping = true;
  const pump = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!bb.write(Buffer.from(value.buffer, value.byteOffset, value.byteLength))) {
          await new Promise<void>((resolve) => {
            const go = () => {
              bb.off('drain', go);
              bb.off('close', go);
              resolve();
            };
            bb.on('drain', go);
            bb.on('close', go);
          });
          if (failure || bb.destroyed) return;
        }
      }
      if (!bb.destroyed) bb.end();
    } catch (err) {
      const reason = request.signal.aborted ? uploadAborted() : err instanceof AppError ? err : badRequest(Messages.malformedMultipart);
      fail(reason);
      bb.destroy(reason);
    } finally {
      pumping = false;
    }
  })();

  try {
    for (;;) {
      const part = queue.shift();
      if (part) {
        yield part;
        // A part the caller did not read is skipped, so the parser can reach the next one.
        if (part.source && !part.source.readableEnded) part.source.resume();
        continue;
      }
      if (failure) throw failure;
      if (closed) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    if (pumping) {
      await reader.cancel().catch(() => {});
      if (!bb.destroyed) bb.destroy();
    }
    await pump;
  }
}
