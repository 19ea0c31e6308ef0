import { dlopen, type FFIFunction, type Library } from 'bun:ffi';

/**
 * `symbols` from the C library (glibc, then musl, by name); null where it cannot be loaded: under W^X memory
 * (systemd's MemoryDenyWriteExecute=) the runtime cannot load a C library at all.
 */
export function openLibc<S extends Record<string, FFIFunction>>(symbols: S): Library<S>['symbols'] | null {
  const arch = process.arch === 'arm64' ? 'aarch64' : 'x86_64';
  for (const name of ['libc.so.6', `libc.musl-${arch}.so.1`, `/lib/ld-musl-${arch}.so.1`]) {
    try {
      return dlopen(name, symbols).symbols;
    } catch {
      // Try the next C library name (glibc, then musl).
    }
  }
  return null;
}
