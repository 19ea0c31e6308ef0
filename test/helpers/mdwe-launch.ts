// Runs the command in argv under the kernel's memory-deny-write-execute (PR_SET_MDWE), the guarantee
// systemd's MemoryDenyWriteExecute= gives a unit; exits 77 where the kernel lacks it (before 6.3).
import { dlopen, FFIType } from 'bun:ffi';

const PR_SET_MDWE = 65;
const PR_MDWE_REFUSE_EXEC_GAIN = 1;
const { symbols } = dlopen('libc.so.6', {
  prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 },
});
if (symbols.prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0) !== 0) process.exit(77);
const child = Bun.spawn(process.argv.slice(2), { stdio: ['ignore', 'inherit', 'inherit'] });
process.on('SIGTERM', () => child.kill('SIGTERM'));
process.exit(await child.exited);
