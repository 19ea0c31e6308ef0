/** Expected error bodies, written once with the exact strings of docs/api.md › The contract and docs/compatibility.md. */
export const errors = {
  noToken: { message: 'No token provided' },
  invalidToken: { message: 'Invalid token' },
  sessionExpired: { message: 'Session expired. Please login again.' },
  sessionRevoked: { message: 'Session has been revoked. Please login again.' },
  invalidCredentials: { message: 'Invalid credentials' },
  accountDisabled: { message: 'This account is disabled: ask the administrator' },
  mfaCodeRequired: { message: 'MFA code required' },
  invalidMfaCode: { message: 'Invalid MFA code' },
  signupDisabled: { message: 'Signup is currently disabled' },
  emailInUse: { message: 'Email already in use' },
  ownerOnly: { message: 'Only the account owner can perform this action.' },
  adminOnly: { message: 'Only the admin can perform this action.' },
  orphansAdminOnly: { message: 'Only the first user can review orphaned files' },
  tooManyRequests: { error: 'Too many requests, please try again later' },
  queueUnavailable: { message: 'Background worker queue is unavailable' },
  invalidCursor: { message: 'Invalid cursor' },
  invalidJobId: { message: 'Invalid background job ID' },
  jobNotFound: { message: 'Background file job not found' },
  jobFailed: { message: 'Background file operation failed' },
  uploadAborted: { error: 'REQUEST_ABORTED', message: 'Upload cancelled by client' },
  permission: (label: string) => ({ message: `You do not have permission to do that. Ask the account owner to enable "${label}".` }),
  desktopOnly: { message: 'This instance is configured for desktop app access only.', error: 'DESKTOP_ONLY_ACCESS' },
} as const;

export const orphanErrors = {
  nothingSelected: { message: 'Select at least one orphan to delete' },
  validationFailed: 'Validation failed',
} as const;
