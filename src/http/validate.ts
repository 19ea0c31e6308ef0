import type { z } from 'zod';
import { validationFailed } from '../errors.ts';

/** Parses input with a zod schema; failure is 422 `Validation failed` with details naming each field. */
export function validate<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  throw validationFailed(
    result.error.issues.map((issue) => ({
      field: issue.path.length ? issue.path.join('.') : 'body',
      message: issue.message,
    })),
  );
}
