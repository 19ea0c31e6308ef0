import { Database } from 'bun:sqlite';

/**
 * Checkpoints the server's write-ahead log on a thread of its own, so copying its pages into the database
 * file and the two fsyncs are not done inside a commit on the thread that answers requests. PASSIVE never
 * waits for a reader or a writer, and never moves a frame a reader still needs.
 */
declare const self: Worker;

export type CheckpointRequest = { file: string; working: Int32Array } | 'checkpoint' | 'close';
export interface CheckpointReply {
  busy: number;
  /** Frames in the log and frames in the database file after the last try; -1 when the log was busy. */
  log: number;
  checkpointed: number;
}

let db: Database | null = null;
let working: Int32Array | null = null;

function checkpoint(): CheckpointReply {
  Atomics.store(working!, 0, 1);
  try {
    return db!.query<CheckpointReply, []>('PRAGMA wal_checkpoint(PASSIVE)').get()!;
  } catch {
    // An I/O error: the request thread's fallback checkpoints, and keeps the log bounded.
    return { busy: 1, log: -1, checkpointed: -1 };
  } finally {
    Atomics.store(working!, 0, 0);
    Atomics.notify(working!, 0);
  }
}

self.onmessage = (event: MessageEvent<CheckpointRequest>) => {
  const request = event.data;
  if (request === 'close') {
    db?.close();
    db = null;
    self.postMessage('closed');
  } else if (request === 'checkpoint') {
    self.postMessage(checkpoint() satisfies CheckpointReply);
  } else {
    working = request.working;
    db = new Database(request.file, { strict: true });
    // Never waits: a checkpoint already running (replication's, the fallback's) makes this one give up.
    db.run('PRAGMA busy_timeout = 0');
    self.postMessage('ready');
  }
};
