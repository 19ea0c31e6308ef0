import type { z } from 'zod';
import type { Job } from './queue.ts';

export interface JobRunContext {
  job: Pick<Job, 'id' | 'kind' | 'accountId' | 'attempts' | 'maxAttempts'>;
  /** Aborted when the worker stops; long handlers check it between batches. */
  signal: AbortSignal;
  /**
   * Adds `n` units of work done. Called inside the transaction that did the work, so what a run
   * interrupted by a crash had committed is counted, and the run after it adds to it.
   */
  addProgress(n: number): void;
  /** The units of work every run of this job has done so far. */
  totalProgress(): number;
}

export interface JobDefinition<S extends z.ZodType = z.ZodType> {
  /** Dotted name, e.g. `files.copy`; the handler's file has the same name. */
  kind: string;
  payload: S;
  /** Attempts before the job is failed for good (default 5). */
  maxAttempts?: number;
  /** Must be idempotent: a job interrupted by a crash runs again from the start. Returns the stored result. */
  handle(payload: z.infer<S>, run: JobRunContext): Promise<unknown> | unknown;
}

/** A failure that retrying cannot fix: the job is failed at once. */
export class PermanentJobError extends Error {}

/** Ask to run again later without spending an attempt. */
export class RetryLaterError extends Error {
  constructor(
    readonly delayMs: number,
    message = 'retry later',
  ) {
    super(message);
  }
}

/** Job kinds and their handlers; each area registers its own at start-up. */
export class JobRegistry {
  private readonly defs = new Map<string, JobDefinition>();

  register<S extends z.ZodType>(def: JobDefinition<S>): void {
    if (this.defs.has(def.kind)) throw new Error(`job kind ${def.kind} registered twice`);
    this.defs.set(def.kind, def as unknown as JobDefinition);
  }

  get(kind: string): JobDefinition | undefined {
    return this.defs.get(kind);
  }

  kinds(): string[] {
    return [...this.defs.keys()];
  }
}
