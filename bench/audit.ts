import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { AuditActions } from '../src/services/admin/audit.ts';
import { newId } from '../src/lib/ids.ts';
import { newStorageKey } from '../src/storage/keys.ts';
import { loadConfig } from '../src/config.ts';
import { openContext } from '../src/composition.ts';
import { createLogger } from '../src/log.ts';
import { freshInstance } from './fixtures.ts';
import { median } from './streams.ts';

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/**
 * Audit overhead on the upload path: 1 KiB files stored the way an upload stores them (sealed object
 * with fsync and rename, then the item row and usage counter in one transaction), with and without
 * an `audit.record` per upload, the server's audit processing running. Rounds alternate in one process;
 * the disk's fsync time drifts, so the median of many short rounds is reported.
 */
export async function runAuditBench(perRound = 300, rounds = 10): Promise<void> {
  const { dir, ownerId } = await freshInstance('coffer-bench-audit-');
  const ctx = openContext(loadConfig({ dataDir: dir }, {}), { mode: 'server', logger: createLogger('silent') });
  ctx.services.audit.start();
  const insert = ctx.db.$client.query(
    `INSERT INTO items (id, account_id, type, name, name_key, size, mime_type, storage_key, wrapped_key, key_id, modified_at, accessed_at, created_at)
     VALUES (?, ?, 'file', ?, ?, ?, 'application/octet-stream', ?, ?, ?, ?, ?, ?)`,
  );
  const principal = { loginId: ownerId, accountId: ownerId, email: 'bench@example.test', ip: '127.0.0.1' };
  const upload = async (audit: boolean) => {
    const key = newStorageKey();
    const sealed = await ctx.storage.put(key, once(randomBytes(1024)));
    const id = newId();
    const now = Date.now();
    ctx.db.$client.transaction(() => {
      insert.run(id, ownerId, `${id}.bin`, `${id}.bin`, sealed.size, key, sealed.wrappedKey, sealed.keyId, now, now, now);
      ctx.services.quota.adjust(ownerId, sealed.size);
    })();
    if (audit)
      ctx.services.audit.record({
        action: AuditActions.fileUpload,
        principal,
        targetType: 'file',
        targetId: id,
        details: { name: `${id}.bin`, size: sealed.size },
      });
  };
  const rates = { on: [] as number[], off: [] as number[] };
  try {
    for (let r = 0; r < rounds; r++) {
      for (const mode of r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
        const t0 = performance.now();
        for (let i = 0; i < perRound; i++) await upload(mode === 'on');
        rates[mode].push(perRound / ((performance.now() - t0) / 1000));
      }
    }
    ctx.services.audit.flush();
    const logged = ctx.db.$client.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM audit_log').get()!.n;
    const on = median(rates.on);
    const off = median(rates.off);
    console.log(
      `audit.uploads_per_s_1KiB audit_on ${on.toFixed(0)} audit_off ${off.toFixed(0)} overhead ${(((off - on) / off) * 100).toFixed(1)}% ` +
        `(+${((1 / on - 1 / off) * 1e6).toFixed(0)} µs per upload; median of ${rounds} rounds x ${perRound} uploads per mode; ${logged} events written to the log)`,
    );
  } finally {
    ctx.services.audit.stop();
    ctx.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await runAuditBench();
