import { z } from 'zod';

/** Sign-in and uniqueness ignore case; the address is shown as it was given. */
export const emailKey = (email: string) => email.trim().toLowerCase();

/** What an email address must look like (SPEC "Limits"): the API's fields and the CLI check with this. */
export const EMAIL = z.email({ message: 'Enter a valid email address' }).max(254, 'Email must be at most 254 characters');
