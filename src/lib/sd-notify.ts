import { FFIType, ptr } from 'bun:ffi';
import { openLibc } from './libc.ts';

/**
 * systemd's readiness protocol (sd_notify): one datagram such as `READY=1` to the unix socket named by
 * NOTIFY_SOCKET, so `Type=notify` units count as started only once the server listens. The runtime has
 * no unix datagram sockets, so the three libc calls go through FFI.
 */
const AF_UNIX = 1;
const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;
const SUN_PATH_MAX = 108;

const SYMBOLS = {
  socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  sendto: { args: [FFIType.i32, FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i64 },
  close: { args: [FFIType.i32], returns: FFIType.i32 },
} as const;

let libc: ReturnType<typeof openLibc<typeof SYMBOLS>> | undefined;

/** The sockaddr_un for a NOTIFY_SOCKET value ('@' starts an abstract address) and its length. */
export function unixAddress(socketPath: string): { address: Uint8Array; length: number } {
  const abstract = socketPath.startsWith('@');
  const pathBytes = new TextEncoder().encode(abstract ? socketPath.slice(1) : socketPath);
  if (pathBytes.length + 1 > SUN_PATH_MAX) throw new Error('NOTIFY_SOCKET path is too long');
  const address = new Uint8Array(2 + SUN_PATH_MAX);
  new DataView(address.buffer).setUint16(0, AF_UNIX, true);
  address.set(pathBytes, abstract ? 3 : 2);
  return { address, length: 2 + pathBytes.length + 1 };
}

/**
 * Sends `state` (e.g. `READY=1`) to systemd when it asked for it; returns whether it was sent. Without
 * NOTIFY_SOCKET (not under a Type=notify unit) it does nothing.
 */
export function sdNotify(state: string, socketPath = process.env.NOTIFY_SOCKET): boolean {
  if (!socketPath) return false;
  if (libc === undefined) libc = openLibc(SYMBOLS);
  const c = libc;
  // Under W^X memory (systemd's MemoryDenyWriteExecute=) the runtime cannot load a C library at all.
  if (!c)
    throw new Error('cannot load the C library to notify systemd (a unit with MemoryDenyWriteExecute=true forbids it: remove that line)');
  const { address, length } = unixAddress(socketPath);
  const message = new TextEncoder().encode(state);
  const fd = c.socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw new Error('cannot open a socket to notify systemd');
  try {
    const sent = Number(c.sendto(fd, ptr(message), message.length, 0, ptr(address), length));
    if (sent !== message.length) throw new Error(`cannot notify systemd at ${socketPath}`);
    return true;
  } finally {
    c.close(fd);
  }
}
