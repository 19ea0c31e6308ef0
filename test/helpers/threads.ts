import fs from 'node:fs';

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
