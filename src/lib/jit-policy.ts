/**
 * The executable starts every thread with JavaScriptCore's tier-up thresholds ×64 (`--compile-jit-policy`,
 * scripts/build.ts), so code that runs once at start stays in the interpreter and the JIT's compilers are not
 * brought in for it (docs/performance.md, the seventh pass). A thread that goes on to do work calls this first.
 * From source the policy is already the normal one.
 */
export function jitAtFullSpeed(): void {
  Bun.unsafe.setJITPolicy(1);
}
