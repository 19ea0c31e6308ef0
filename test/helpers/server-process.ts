import path from 'node:path';
import { eventually } from './eventually.ts';

const MAIN = path.resolve(import.meta.dir, '../../src/main.ts');

/**
 * A loopback port nothing listens on now, from the kernel: a random one in 20000–50000 could be an outgoing
 * connection's (the ephemeral range starts at 32768), which made a server fail to start under the suite's load.
 */
export function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const { port } = probe;
  probe.stop(true);
  return port;
}

/** Waits until a server started as `proc` answers /health at `url` ('up'), or until it exits first ('exited'). */
export function upOrExited(url: string, proc: { exitCode: number | null }, timeoutMs: number): Promise<'up' | 'exited'> {
  return eventually(
    async () => {
      if (proc.exitCode !== null) return 'exited';
      return (
        (await fetch(`${url}/health`).then(
          (r) => r.ok,
          () => false,
        )) && 'up'
      );
    },
    { timeoutMs, intervalMs: 25, message: `${url} did not answer /health` },
  );
}

/** The source server (or the executable) as its own process, so it can be killed for real. */
export class ServerProcess {
  proc: ReturnType<typeof Bun.spawn> | null = null;
  url = '';
  /** The last 64 KiB the server wrote to stderr (its error lines at the default LOG_LEVEL=error), as it comes. */
  stderr = '';

  constructor(
    private readonly dataDir: string,
    private readonly binary?: string,
    private readonly env: Record<string, string> = {},
  ) {}

  /** Starts on a free port; a port another process took meanwhile means another try on a new one. */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.startOnce();
      } catch (err) {
        if (attempt === 5 || !String(err).includes('already in use')) throw err;
      }
    }
  }

  private async startOnce(): Promise<void> {
    const port = freePort();
    const cmd = this.binary ? [this.binary, 'serve'] : [process.execPath, MAIN, 'serve'];
    this.proc = Bun.spawn([...cmd, '--port', String(port), '--host', '127.0.0.1', '--data-dir', this.dataDir], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        LOG_LEVEL: 'error',
        COFFER_MIN_FREE_BYTES: '16M',
        COFFER_GENERAL_RATE_LIMIT: '1000000',
        COFFER_PASSWORD_HASH_RATE_LIMIT: '1000000',
        ...this.env,
      },
      stdout: 'ignore',
      stderr: 'pipe',
    });
    this.url = `http://127.0.0.1:${port}`;
    const drained = this.drain(this.proc.stderr as ReadableStream<Uint8Array>);
    if ((await upOrExited(this.url, this.proc, 20_000)) === 'exited') throw new Error(`server exited: ${await drained}`);
  }

  /** Reads stderr as it comes and keeps its last 64 KiB: a long bench's server logs errors there, and the runtime would hold them all. */
  private async drain(stderr: ReadableStream<Uint8Array>): Promise<string> {
    const decoder = new TextDecoder();
    let tail = '';
    for await (const chunk of stderr) {
      tail = (tail + decoder.decode(chunk, { stream: true })).slice(-65_536);
      this.stderr = tail;
    }
    return tail;
  }

  async kill(): Promise<void> {
    this.proc?.kill('SIGKILL');
    await this.proc?.exited;
  }

  async stop(): Promise<void> {
    this.proc?.kill('SIGTERM');
    await this.proc?.exited;
  }
}

/** One account's requests to a ServerProcess: JSON or FormData bodies, with the session cookie its sign-up set. */
export class ProcessClient {
  private cookie = '';

  constructor(private readonly server: ServerProcess) {}

  /** Signs up (the first account is the admin) and keeps the session. */
  signUp = async (email: string, password: string, name: string): Promise<void> => {
    const res = await this.call('POST', '/api/signup', { email, password, name });
    this.cookie = /token=[^;]+/.exec(res.headers.get('set-cookie') ?? '')![0];
  };

  call = (method: string, p: string, body?: unknown): Promise<Response> => {
    const form = body instanceof FormData;
    return fetch(this.server.url + p, {
      method,
      headers: { cookie: this.cookie, ...(form ? {} : { 'content-type': 'application/json' }) },
      body: form ? body : body === undefined ? undefined : JSON.stringify(body),
    });
  };

  get = async (p: string): Promise<any> => (await this.call('GET', p)).json();
}

/**
 * Starts the server on `dataDir` again and again with `preload` (which kills it as the tested work begins), until it
 * settles (`settled` passes within 30 s of a start) or `maxStarts` is reached: how many starts were killed (SIGKILL), and
 * whether it settled. A crash loop shows as every start killed.
 */
export async function startsUntilSettled(
  dataDir: string,
  preload: string,
  settled: () => unknown,
  maxStarts: number,
): Promise<{ crashes: number; settled: boolean }> {
  let crashes = 0;
  for (let start = 0; start < maxStarts; start++) {
    const proc = Bun.spawn(
      [process.execPath, '--preload', preload, MAIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
      {
        env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'silent', COFFER_MIN_FREE_BYTES: '16M' },
        stdout: 'ignore',
        stderr: 'ignore',
      },
    );
    const outcome = await Promise.race([
      proc.exited.then(() => 'exited' as const),
      eventually(settled, { timeoutMs: 30_000 }).then(
        () => 'settled' as const,
        () => 'never settled' as const,
      ),
    ]);
    if (outcome === 'exited') {
      if (proc.signalCode !== 'SIGKILL')
        throw new Error(`the server exited by ${proc.signalCode ?? `code ${proc.exitCode}`}, not by the preload's SIGKILL`);
      crashes++;
      continue;
    }
    proc.kill('SIGTERM');
    await proc.exited;
    if (outcome === 'settled') return { crashes, settled: true };
  }
  return { crashes, settled: false };
}
