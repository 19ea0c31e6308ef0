import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { isAlive } from '../lib/pid.ts';

/**
 * Holds object deletions back until the returned release is called: a full backup reads the objects its
 * database snapshot names, so none of them may go in the meantime. The hold of a dead process lapses.
 */
export function holdObjectDeletions(holdsDir: string): () => void {
  fs.mkdirSync(holdsDir, { recursive: true, mode: 0o700 });
  const file = path.join(holdsDir, `backup-${process.pid}-${randomBytes(4).toString('hex')}`);
  fs.writeFileSync(file, String(process.pid), { mode: 0o600 });
  return () => fs.rmSync(file, { force: true });
}

/** Whether a live process holds object deletions back; lapsed holds are removed. */
export function objectDeletionsHeld(holdsDir: string): boolean {
  let names: string[];
  try {
    names = fs.readdirSync(holdsDir);
  } catch {
    return false;
  }
  let held = false;
  for (const name of names) {
    const file = path.join(holdsDir, name);
    const pid = Number(/^backup-(\d+)-/.exec(name)?.[1]);
    if (pid && isAlive(pid)) held = true;
    else fs.rmSync(file, { force: true });
  }
  return held;
}
