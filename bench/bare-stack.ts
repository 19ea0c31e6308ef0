import fs from 'node:fs';
import path from 'node:path';
import { createCipheriv, randomBytes } from 'node:crypto';
import { Database } from 'bun:sqlite';
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/bun-sqlite';
import { Elysia } from 'elysia';
import { jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';
import { embeddedMigrations } from '../src/db/migrations.ts';
import * as schema from '../src/db/schema/index.ts';

/**
 * The memory bench's floor for Coffer's stack, compiled as Coffer is: a Bun server that loads at start what
 * Coffer's stack needs and nothing of Coffer's code. Elysia with one route; drizzle over bun:sqlite in WAL
 * with Coffer's schema (its migrations' SQL applied, the schema's tables known to drizzle); a zod schema;
 * AES-256-GCM from node:crypto used once; a jose HS256 token signed and verified once. The route reads a
 * user row through drizzle and parses it with zod. Its idle RSS, beside the bare Bun server's and
 * Coffer's, says which part of the gap is the stack's and which is Coffer's own.
 * Run as `bare-stack serve --port <port> --host 127.0.0.1 --data-dir <dir>`, as `coffer serve` is started.
 */
const arg = (name: string) => process.argv[process.argv.indexOf(name) + 1]!;
const root = arg('--data-dir');
fs.mkdirSync(root, { recursive: true });

const sqlite = new Database(path.join(root, 'stack.db'), { create: true, strict: true });
sqlite.run('PRAGMA busy_timeout = 5000');
sqlite.run('PRAGMA journal_mode = WAL');
sqlite.run('PRAGMA synchronous = NORMAL');
sqlite.run('PRAGMA foreign_keys = ON');
sqlite.run('PRAGMA temp_store = MEMORY');
sqlite.transaction(() => {
  for (const m of embeddedMigrations)
    for (const statement of m.sql.split('--> statement-breakpoint').map((s) => s.trim())) if (statement) sqlite.run(statement);
})();
const db = drizzle({ client: sqlite, schema });

const now = Date.now();
db.insert(schema.users)
  .values({ id: 'u1', email: 'bench@example.test', emailKey: 'bench@example.test', createdAt: now, updatedAt: now })
  .run();

const User = z.object({ id: z.string(), email: z.email(), name: z.string(), storageUsed: z.number().int().nonnegative() });

const key = randomBytes(32);
const iv = randomBytes(12);
const cipher = createCipheriv('aes-256-gcm', key, iv);
const sealed = Buffer.concat([cipher.update(randomBytes(4096)), cipher.final(), cipher.getAuthTag()]);

const secret = randomBytes(32);
const token = await new SignJWT({ sid: 's1' }).setProtectedHeader({ alg: 'HS256' }).setSubject('u1').setIssuedAt().sign(secret);
const { payload } = await jwtVerify(token, secret);

new Elysia()
  .get('/health', () => {
    const row = db.select().from(schema.users).where(eq(schema.users.id, payload.sub!)).get();
    return { ...User.parse(row), sealed: sealed.length };
  })
  .listen({ port: Number(arg('--port')), hostname: arg('--host') });
