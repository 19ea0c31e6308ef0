/** Field limits (docs/api.md › Limits) the server enforces and the web app's inputs carry. */
export const PASSWORD = {
  min: 6,
  /** A sub-user's first password, set by its owner. */
  subUserMin: 8,
  max: 128,
} as const;

/** A login's display name. */
export const DISPLAY_NAME_MAX = 100;
export const EMAIL_MAX = 254;
/** The one-time code printed for the first sign-up. */
export const SETUP_CODE_MAX = 64;
/** A two-factor code or a backup code as typed. */
export const MFA_CODE_MAX = 16;
/** A passkey's name, as its owner gives it. */
export const PASSKEY_NAME_MAX = 64;
/** How old an orphan must be before it may be deleted, in minutes (docs/api.md › Orphaned files). */
export const GRACE_MINUTES = { min: 60, max: 525600, default: 1440 } as const;
/** Entries per array in one orphan delete request. */
export const DELETE_LIMIT = 500;
