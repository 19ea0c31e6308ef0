/** Sign-in and uniqueness ignore case; the address is shown as it was given. */
export const emailKey = (email: string) => email.trim().toLowerCase();
