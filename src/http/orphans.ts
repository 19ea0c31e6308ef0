import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { DELETE_LIMIT, GRACE_MINUTES } from '../contract/limits.ts';
import { route, routes } from './route.ts';
import { validate } from './validate.ts';

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

/** Orphan review (docs/api.md › Orphaned files): the admin only; everyone else is refused with that section's message and audited. */
export function orphanRoutes(ctx: AppContext) {
  const { orphans } = ctx.services;
  return routes([
    route('GET /api/user/orphans', {
      query: scanQuery,
      handler: ({ principal, query, set }) => {
        if (query.jobId !== undefined) {
          const poll = orphans.pollScan(query.jobId);
          if (poll.done) return poll.result;
          set.status = 202;
          return poll.body;
        }
        const started = orphans.startScan(principal, query.graceMinutes ?? GRACE_MINUTES.default);
        set.status = 202;
        return started;
      },
    }),
    // Two shapes: a poll ({jobId}) or a new deletion; which one decides the schema.
    route('POST /api/user/orphans/delete', {
      rawBody: deleteBody,
      handler: ({ principal, body, set }) => {
        if (typeof body === 'object' && body !== null && 'jobId' in body) {
          const poll = orphans.pollDelete(validate(pollBody, body).jobId);
          if (poll.done) return poll.result;
          set.status = 202;
          return poll.body;
        }
        const started = orphans.startDelete(principal, validate(deleteBody, body));
        set.status = 202;
        return started;
      },
    }),
  ]);
}
