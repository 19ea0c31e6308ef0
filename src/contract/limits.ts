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
