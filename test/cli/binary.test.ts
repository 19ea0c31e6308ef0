import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { BINARY, ensureBinary, startBinary, type RunningBinary } from '../helpers/binary.ts';

describe('the built executable', () => {
  let running: RunningBinary;
  beforeAll(async () => {
    await ensureBinary();
    running = await startBinary();
  }, 120_000);
  afterAll(async () => {
    if (running) expect(await running.stop()).toBe(0);
  });

  test('copied alone into an empty directory, it serves /health with zero configuration', async () => {
    const res = await fetch(`${running.url}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; uptime: number };
    expect(body.status).toBe('ok');
    expect(typeof body.uptime).toBe('number');
  });

  test('--help lists the commands', () => {
    const r = Bun.spawnSync([BINARY, '--help']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.toString()).toMatch(/serve/);
    expect(r.stdout.toString()).toMatch(/migrate/);
  });
});
