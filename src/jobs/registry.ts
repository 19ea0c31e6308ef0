import type { JobSpec, PayloadOf } from './catalog.ts';
import type { Job } from './queue.ts';

export interface JobRunContext {
  job: Pick<Job, 'id' | 'kind' | 'accountId' | 'attempts' | 'maxAttempts' | 'createdAt'>;
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

/** Must be idempotent: a job interrupted by a crash runs again from the start. Returns the stored result. */
export type JobHandler<J extends JobSpec = JobSpec> = (payload: PayloadOf<J>, run: JobRunContext) => Promise<unknown> | unknown;

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

/** Job kinds and their handlers, registered at start-up. */
export class JobRegistry {
  private readonly defs = new Map<string, { spec: JobSpec; handle: JobHandler }>();

  register<J extends JobSpec>(spec: J, handle: JobHandler<J>): void {
    if (this.defs.has(spec.name)) throw new Error(`job kind ${spec.name} registered twice`);
    this.defs.set(spec.name, { spec, handle: handle as JobHandler });
  }

  get(kind: string): { spec: JobSpec; handle: JobHandler } | undefined {
    return this.defs.get(kind);
  }

  kinds(): string[] {
    return [...this.defs.keys()];
  }
}
