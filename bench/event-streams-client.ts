// One client process of the event-streams bench: holds many raw SSE connections and reports on stdout (JSON lines).
// argv: port, tokens file (one per line), first stream, stream count, streams per token.
import fs from 'node:fs';
import type { Socket } from 'bun';

const [port, tokensFile, firstArg, countArg, perTokenArg] = process.argv.slice(2);
const tokens = fs.readFileSync(tokensFile!, 'utf8').trim().split('\n');
const first = Number(firstArg);
const count = Number(countArg);
const perToken = Number(perTokenArg);
const OPENING_AT_ONCE = 200;

interface Conn {
  tail: string;
  connected: boolean;
  seen: boolean;
}

const say = (msg: unknown) => process.stdout.write(`${JSON.stringify(msg)}\n`);
const now = () => performance.timeOrigin + performance.now();
let marker = '';
let seen = 0;
let connected = 0;
let failed = false;

function fail(why: string): void {
  if (failed) return;
  failed = true;
  say({ error: why });
}

function onText(conn: Conn, text: string): void {
  // The tail of the previous chunk is kept so a marker split across two chunks is still found.
  const hay = conn.tail + text;
  conn.tail = hay.slice(-200);
  if (!conn.connected && hay.includes('"connected"')) {
    conn.connected = true;
    if (++connected === count) say({ ready: count });
    release();
  }
  if (marker && !conn.seen && hay.includes(marker)) {
    conn.seen = true;
    if (++seen === count) say({ got: marker, last: now() });
  }
}

const conns: Conn[] = [];
let next = 0;
let pending = 0;

function release(): void {
  pending--;
  openMore();
}

function openMore(): void {
  while (pending < OPENING_AT_ONCE && next < count) {
    const index = first + next++;
    pending++;
    const conn: Conn = { tail: '', connected: false, seen: false };
    conns.push(conn);
    const token = tokens[Math.floor(index / perToken)]!;
    Bun.connect<undefined>({
      hostname: '127.0.0.1',
      port: Number(port),
      socket: {
        open(socket: Socket<undefined>) {
          socket.write(
            `GET /api/files/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`,
          );
        },
        data(_socket, data) {
          onText(conn, data.toString('latin1'));
        },
        close() {
          if (!stopping) fail(`stream ${index} closed by the server`);
        },
        error(_socket, err) {
          fail(`stream ${index}: ${err.message}`);
        },
        connectError(_socket, err) {
          fail(`stream ${index} could not connect: ${err.message}`);
        },
      },
    }).catch((err: Error) => fail(`stream ${index} could not connect: ${err.message}`));
  }
}

let stopping = false;
let input = '';
process.stdin.on('data', (chunk: Buffer) => {
  input += chunk.toString();
  for (let nl = input.indexOf('\n'); nl >= 0; nl = input.indexOf('\n')) {
    const line = input.slice(0, nl);
    input = input.slice(nl + 1);
    if (line.startsWith('expect ')) {
      marker = line.slice(7);
      seen = 0;
      for (const c of conns) c.seen = false;
      say({ armed: marker });
    } else if (line === 'stop') {
      stopping = true;
      process.exit(0);
    }
  }
});

openMore();
