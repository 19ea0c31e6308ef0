import { dlopen, FFIType, ptr } from 'bun:ffi';
import { unixAddress } from '../../src/lib/sd-notify.ts';
import { eventually } from './eventually.ts';

const AF_UNIX = 1;
const SOCK_DGRAM = 2;
const MSG_DONTWAIT = 0x40;

const { symbols: c } = dlopen('libc.so.6', {
  socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  bind: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
  recv: { args: [FFIType.i32, FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i64 },
  close: { args: [FFIType.i32], returns: FFIType.i32 },
});

/** What systemd's end of NOTIFY_SOCKET sees: a bound unix datagram socket whose messages the test reads. */
export function listenNotifySocket(socketPath: string) {
  const fd = c.socket(AF_UNIX, SOCK_DGRAM, 0);
  const { address, length } = unixAddress(socketPath);
  if (fd < 0 || c.bind(fd, ptr(address), length) !== 0) throw new Error(`cannot bind ${socketPath}`);
  const buffer = new Uint8Array(4096);
  return {
    /** The next message, waiting up to `ms`. */
    next(ms = 10_000): Promise<string> {
      return eventually(
        () => {
          const n = Number(c.recv(fd, ptr(buffer), buffer.length, MSG_DONTWAIT));
          return n >= 0 && new TextDecoder().decode(buffer.subarray(0, n));
        },
        { timeoutMs: ms, intervalMs: 20, message: 'no notification arrived' },
      );
    },
    close: () => c.close(fd),
  };
}
