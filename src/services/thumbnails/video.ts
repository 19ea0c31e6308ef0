import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { parseRange } from '../../lib/byte-range.ts';

/** Opens the decrypted video, whole or the half-open `range` of it. */
export type OpenVideo = (range?: { start: number; end: number }) => Promise<ReadableStream<Uint8Array>>;

export type Frame = { ok: true; png: Uint8Array } | { ok: false; reason: string };

// A first frame takes a second or two; longer is a stuck or hostile file.
const FRAME_TIMEOUT_MS = 60_000;
// A PNG of a frame within the pixel cap is far smaller than this; more is ended.
const MAX_FRAME_BYTES = 64 * 1024 * 1024;
const MAX_ERROR_BYTES = 4096;
// Demuxers ffmpeg may use: containers of video files only, never playlists or concat lists that name other URLs.
const FORMATS = 'mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,avi,mpeg,mpegts,flv,asf,ogg';

/**
 * The first frame of a video as a PNG, by the ffmpeg at `ffmpegPath`. The video is sealed, so ffmpeg reads
 * it from a one-time loopback HTTP server that decrypts the ranges it asks for: no plaintext on disk, and
 * ffmpeg can seek (an MP4 whose index is at the end cannot be read from a pipe).
 */
export class VideoFrames {
  private readonly running = new Set<Bun.Subprocess>();
  private stopped = false;

  constructor(
    private readonly ffmpegPath: string,
    private readonly maxPixels: number,
    private readonly limits = { timeoutMs: FRAME_TIMEOUT_MS, maxBytes: MAX_FRAME_BYTES },
  ) {}

  async firstFrame(size: number, open: OpenVideo): Promise<Frame> {
    if (this.stopped) return { ok: false, reason: 'the server is stopping' };
    const secret = `/${randomBytes(24).toString('base64url')}`;
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (req) => serveVideo(req, secret, size, open),
    });
    try {
      return await this.run(`http://127.0.0.1:${server.port}${secret}`);
    } finally {
      void server.stop(true);
    }
  }

  /** Kills every ffmpeg still running (the server's stop). */
  stop(): void {
    this.stopped = true;
    for (const proc of this.running) proc.kill('SIGKILL');
  }

  private async run(url: string): Promise<Frame> {
    const proc = Bun.spawn(
      [
        this.ffmpegPath,
        ...['-nostdin', '-hide_banner', '-loglevel', 'error'],
        ...['-protocol_whitelist', 'http,tcp', '-format_whitelist', FORMATS],
        // One decoding thread (the pool's slot is one core), and no frame above the pixel cap is decoded.
        ...['-threads', '1', '-max_pixels', String(Math.min(this.maxPixels, 2 ** 31 - 1))],
        ...['-i', url],
        ...['-map', '0:v:0', '-frames:v', '1', '-an', '-sn', '-dn', '-filter_threads', '1'],
        ...['-f', 'image2pipe', '-c:v', 'png', '-compression_level', '1', 'pipe:1'],
      ],
      { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', env: {} },
    );
    this.running.add(proc);
    // Below request handling, like the worker threads.
    try {
      os.setPriority(proc.pid, 10);
    } catch {
      // Not permitted in some containers: ffmpeg then runs at normal priority.
    }
    let why: string | null = null;
    const timer = setTimeout(() => {
      why = 'reading the first frame took too long';
      proc.kill('SIGKILL');
    }, this.limits.timeoutMs);
    try {
      const [png, errors] = await Promise.all([
        readCapped(proc.stdout, this.limits.maxBytes, () => {
          why = 'the first frame is too large';
          proc.kill('SIGKILL');
        }),
        readCapped(proc.stderr, MAX_ERROR_BYTES, () => {}),
      ]);
      const code = await proc.exited;
      if (this.stopped) return { ok: false, reason: 'the server is stopping' };
      if (why) return { ok: false, reason: why };
      if (code !== 0 || png.byteLength === 0) {
        const said = new TextDecoder().decode(errors).trim().split('\n').at(-1) ?? '';
        return { ok: false, reason: `ffmpeg found no frame${said ? `: ${said.slice(0, 200)}` : ''}` };
      }
      return { ok: true, png };
    } finally {
      clearTimeout(timer);
      this.running.delete(proc);
    }
  }
}

/** The one path ffmpeg was given, with Range, so it can seek; anything else 404. */
async function serveVideo(req: Request, secret: string, size: number, open: OpenVideo): Promise<Response> {
  if (new URL(req.url).pathname !== secret || (req.method !== 'GET' && req.method !== 'HEAD')) return new Response(null, { status: 404 });
  const headers = { 'Accept-Ranges': 'bytes', 'Content-Type': 'application/octet-stream' };
  const range = parseRange(req.headers.get('range'), size);
  if (range === 'unsatisfiable') return new Response(null, { status: 416, headers: { ...headers, 'Content-Range': `bytes */${size}` } });
  const head = req.method === 'HEAD';
  if (!range) return new Response(head ? null : await open(), { headers: { ...headers, 'Content-Length': String(size) } });
  return new Response(head ? null : await open(range), {
    status: 206,
    headers: {
      ...headers,
      'Content-Length': String(range.end - range.start),
      'Content-Range': `bytes ${range.start}-${range.end - 1}/${size}`,
    },
  });
}

/** All of `stream` up to `cap` bytes; past it `over` is called and the rest is dropped. */
async function readCapped(stream: ReadableStream<Uint8Array>, cap: number, over: () => void): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of stream) {
    if (total + chunk.byteLength > cap) {
      over();
      break;
    }
    chunks.push(chunk);
    total += chunk.byteLength;
  }
  return Buffer.concat(chunks);
}
