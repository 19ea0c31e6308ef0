// The bare reference for the profile and list routes: Bun.serve over the same database doing only their
// SQLite read and JSON, no session, routes or policy. `bun bench/bare-read.ts <db> <port> <account id> [peer]`:
// with `peer` it also asks the runtime for the peer's address, as any server that limits requests by address must.
import { Database } from 'bun:sqlite';

const [dbPath, port, accountId, mode] = process.argv.slice(2);
if (!dbPath || !port || !accountId) throw new Error('usage: bare-read.ts <db> <port> <account id>');
const db = new Database(dbPath, { readonly: true });
db.run('PRAGMA busy_timeout = 5000');
const user = db.query('SELECT * FROM users WHERE id = ?');
// Folders first, then files, each by name: two index range scans, as Coffer's page reads them.
const children = db.query(
  'SELECT * FROM items WHERE account_id = ? AND parent_id = ? AND type = ? AND deleted_at IS NULL ORDER BY name_key, id LIMIT ?',
);
const page = (parentId: string | null) => {
  const folders = children.all(accountId, parentId, 'folder', 200);
  return [...folders, ...children.all(accountId, parentId, 'file', 200 - folders.length)];
};

Bun.serve({
  port: Number(port),
  hostname: '127.0.0.1',
  fetch(req, server) {
    if (mode === 'peer' && !server.requestIP(req)?.address) return new Response('no peer', { status: 500 });
    const url = new URL(req.url);
    if (url.pathname === '/profile') return Response.json(user.get(accountId));
    if (url.pathname === '/list') return Response.json({ items: page(url.searchParams.get('parentId')) });
    return new Response('not found', { status: 404 });
  },
});
