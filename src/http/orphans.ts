import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { DELETE_LIMIT, GRACE_MINUTES } from '../services/maintenance/orphans.ts';
import { readJson } from './body.ts';
import { sessionPlugin } from './guard.ts';
import { validate } from './validate.ts';
import { describeInput } from './openapi.ts';

const graceField = z
  .number({ message: 'graceMinutes must be a whole number of minutes' })
  .int('graceMinutes must be a whole number of minutes')
  .min(GRACE_MINUTES.min, `graceMinutes must be at least ${GRACE_MINUTES.min}`)
  .max(GRACE_MINUTES.max, `graceMinutes must be at most ${GRACE_MINUTES.max}`);

const scanQuery = z
  .object({
    graceMinutes: z.preprocess((v) => (typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v), graceField).optional(),
    jobId: z.string().optional(),
  })
  .refine((q) => !(q.jobId !== undefined && q.graceMinutes !== undefined), {
    path: ['jobId'],
    message: 'Send either jobId (to poll) or graceMinutes (to start a scan), not both',
  });

const selection = (field: string) =>
  z
    .array(z.string({ message: `every ${field} entry must be a string` }), { message: `${field} must be an array of strings` })
    .max(DELETE_LIMIT, `${field} can hold at most ${DELETE_LIMIT} entries`)
    .default([]);

const pollBody = z.object({ jobId: z.string({ message: 'jobId must be a string' }) }).strict();
const deleteBody = z.object({
  storageKeys: selection('storageKeys'),
  fileIds: selection('fileIds'),
  graceMinutes: graceField.default(GRACE_MINUTES.default),
});

/** Orphan review (SPEC "Orphaned files"): the admin only; everyone else is refused with SPEC's message and audited. */
export function orphanRoutes(ctx: AppContext) {
  const { orphans } = ctx.services;
  return new Elysia({ name: 'http/orphans', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .get(
      '/api/user/orphans',
      ({ principal, query, set }) => {
        const q = validate(scanQuery, query);
        if (q.jobId !== undefined) {
          const poll = orphans.pollScan(q.jobId);
          if (poll.done) return poll.result;
          set.status = 202;
          return poll.body;
        }
        const started = orphans.startScan(principal, q.graceMinutes ?? GRACE_MINUTES.default);
        set.status = 202;
        return started;
      },
      { session: true, detail: describeInput({ query: scanQuery }) },
    )
    .post(
      '/api/user/orphans/delete',
      async ({ principal, request, set }) => {
        const raw = await readJson(request);
        if (typeof raw === 'object' && raw !== null && 'jobId' in raw) {
          const poll = orphans.pollDelete(validate(pollBody, raw).jobId);
          if (poll.done) return poll.result;
          set.status = 202;
          return poll.body;
        }
        const started = orphans.startDelete(principal, validate(deleteBody, raw));
        set.status = 202;
        return started;
      },
      { session: true, detail: describeInput({ body: deleteBody }) },
    );
}
