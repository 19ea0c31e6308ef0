import { z } from 'zod';
import { MFA_CODE_MAX, PASSWORD } from './limits.ts';

/** The login's password, or (without one) a code of its second factor, asked again before a lasting credential is made. */
export const confirmationFields = {
  password: z.string().max(PASSWORD.max, `password must be at most ${PASSWORD.max} characters`).optional(),
  code: z.string().max(MFA_CODE_MAX, `code must be at most ${MFA_CODE_MAX} characters`).optional(),
};
