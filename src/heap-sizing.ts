import fs from 'node:fs';
import { dlopen, FFIType, ptr } from 'bun:ffi';

/**
 * JavaScriptCore sizes its heap growth from the machine's RAM, and only reads that setting from the
 * environment at start-up. On a host with 16 GiB or more it lets garbage pile up: a 1 GiB upload
 * peaked at 150-163 MiB RSS on a 24 GiB machine against 113-126 MiB with the RAM taken as 4-12 GiB,
 * for about a third more CPU per GiB spent collecting. Coffer is built for small boxes, so it sizes
 * its heap as on one, whatever the host.
 */
export const HEAP_RAM_VARIABLE = 'BUN_JSC_forceRAMSize';
export const HEAP_RAM_BYTES = 4 * 1024 ** 3;

/**
 * Replaces this process (same pid, arguments, environment and open descriptors) with itself started
 * with the heap sizing set, unless it is already set (an admin's own value wins) or this is not Linux.
 * Must run before anything is written or opened. Returns only when the process was not replaced.
 */
export function restartWithHeapSizing(): void {
  if (process.platform !== 'linux' || process.env[HEAP_RAM_VARIABLE] !== undefined) return;
  let execve: (path: Buffer, argv: BigUint64Array, envp: BigUint64Array) => number;
  try {
    execve = dlopen('libc.so.6', { execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 } }).symbols.execve;
  } catch {
    return; // not glibc: run with the runtime's own sizing
  }
  // The kernel's own copies, byte for byte: process.argv is rewritten by the runtime, process.env decoded.
  const argv = fs.readFileSync('/proc/self/cmdline');
  const environ = fs.readFileSync('/proc/self/environ');
  if (argv.at(-1) !== 0 || (environ.length > 0 && environ.at(-1) !== 0)) return;
  const env = Buffer.concat([environ, Buffer.from(`${HEAP_RAM_VARIABLE}=${HEAP_RAM_BYTES}\0`)]);
  // Returns only on failure; the process then carries on with the runtime's own sizing.
  execve(Buffer.from('/proc/self/exe\0'), pointersTo(argv), pointersTo(env));
}

/** A NULL-terminated array of pointers to the NUL-terminated strings packed in `block`. */
function pointersTo(block: Buffer): BigUint64Array {
  const starts: number[] = [];
  for (let at = 0; at < block.length; at = block.indexOf(0, at) + 1) starts.push(at);
  const list = new BigUint64Array(starts.length + 1);
  starts.forEach((at, i) => (list[i] = BigInt(ptr(block, at))));
  return list;
}
