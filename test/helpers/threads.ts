import fs from 'node:fs';

/** The fields of a thread's stat line after its name (field 3 onwards), or null once it has exited. */
function statFields(tid: string): string[] | null {
  try {
    const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** Worker threads of this process (Bun names them "Worker") and the nice value of each, by thread id. */
export function workerThreads(): Map<string, number> {
  const threads = new Map<string, number>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === 'Worker') {
      threads.set(tid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    }
  }
  return threads;
}

/** The worker threads started since `before` was taken (other suites in this process may keep their own). */
export function startedSince(before: Map<string, number>): Map<string, number> {
  return new Map([...workerThreads()].filter(([tid]) => !before.has(tid)));
}

/** CPU milliseconds a thread has used (user and system), whatever the machine's load made of its wall clock. */
export function threadCpuMs(tid: string): number {
  const fields = statFields(tid);
  if (!fields) throw new Error(`thread ${tid} has exited`);
  // utime and stime (fields 14 and 15) are in clock ticks of 10 ms on Linux.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
