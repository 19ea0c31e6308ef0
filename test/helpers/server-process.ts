import path from 'node:path';

const MAIN = path.resolve(import.meta.dir, '../../src/main.ts');

/** The source server (or the executable) as its own process, so it can be killed for real. */
export class ServerProcess {
  proc: ReturnType<typeof Bun.spawn> | null = null;
  url = '';

  constructor(
    private readonly dataDir: string,
    private readonly binary?: string,
    private readonly env: Record<string, string> = {},
  ) {}

  /** Starts on a random port; a port another process holds means another try on a new one. */
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
    const port = 20000 + Math.floor(Math.random() * 30000);
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
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        if ((await fetch(`${this.url}/health`)).ok) return;
      } catch {
        if (this.proc.exitCode !== null) throw new Error(`server exited: ${await new Response(this.proc.stderr as ReadableStream).text()}`);
        if (Date.now() > deadline) throw new Error('server did not answer /health within 20 s');
        await Bun.sleep(25);
      }
    }
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
