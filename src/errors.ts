import { MAX_FOLDER_DEPTH, NAME_TAKEN, RELATIVE_PATH_FOLDERS } from './contract/names.ts';

/** The one error type services throw; the HTTP layer turns it into `{message, ...extra}` with `status`. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }

  /** The JSON body of the error response. */
  body(): Record<string, unknown> {
    return { message: this.message, ...this.extra };
  }
}

/** Rate-limiter refusals have their own body shape (docs/api.md › Errors): `{error}`, not `{message}`. */
export class RateLimitedError extends AppError {
  constructor(headers: Record<string, string>) {
    super(429, Messages.tooManyRequests, undefined, headers);
  }

  override body(): Record<string, unknown> {
    return { error: this.message };
  }
}

export const badRequest = (message: string, extra?: Record<string, unknown>) => new AppError(400, message, extra);
export const unauthorized = (message: string) => new AppError(401, message);
export const forbidden = (message: string, extra?: Record<string, unknown>) => new AppError(403, message, extra);
export const notFound = (message: string) => new AppError(404, message);
export const conflict = (message: string) => new AppError(409, message);
/** A read's or write's precondition that no longer holds (RFC 9110 13.1.1, 13.1.4). */
export const preconditionFailed = (header: 'If-Match' | 'If-Unmodified-Since') =>
  new AppError(412, header === 'If-Match' ? Messages.ifMatchFailed : Messages.unmodifiedSinceFailed);
const tooLarge = (message: string) => new AppError(413, message);

export interface ValidationDetail {
  field: string;
  message: string;
}
export const validationFailed = (details: ValidationDetail[]) => new AppError(422, Messages.validationFailed, { details });

/** Strings clients match on (docs/api.md › The contract and docs/compatibility.md), kept in one place. */
export const Messages = {
  validationFailed: 'Validation failed',
  notFoundRoute: 'Not found',
  internal: 'Internal server error',
  bodyTooLarge: 'Request body too large (the limit for JSON bodies is 1 MiB)',
  invalidJson: 'Request body is not valid JSON',
  notJson: 'Send the request body as JSON (Content-Type: application/json)',
  tooManyRequests: 'Too many requests, please try again later',
  queueUnavailable: 'Background worker queue is unavailable',
  crossOrigin: 'Cross-origin request refused',
  invalidHost: 'Bad request: the Host header is missing or is not a valid host name',
  invalidTarget: 'Bad request: the request target must be a path such as /api/files',
  // Sign-in
  signupDisabled: 'Signup is currently disabled',
  emailInUse: 'Email already in use',
  invalidCredentials: 'Invalid credentials',
  mfaCodeRequired: 'MFA code required',
  invalidMfaCode: 'Invalid MFA code',
  noToken: 'No token provided',
  invalidToken: 'Invalid token',
  sessionExpired: 'Session expired. Please login again.',
  sessionRevoked: 'Session has been revoked. Please login again.',
  mfaNewerThanSession:
    'Two-factor authentication was turned on, or its backup codes made, after this session signed in, so its codes do not confirm it: sign out, sign in again, then enter a code',
  signInOvertaken: 'The password was changed, or every session signed out, while this sign-in was checked. Sign in again.',
  sessionNotFound: 'Session not found',
  passwordChangeDisabled: 'Password change has been disabled by the administrator',
  wrongCurrentPassword: 'Current password is incorrect',
  noLocalPassword: 'Password change is not available for this account',
  idpNotConfigured: 'Single sign-on is not configured on this Coffer',
  idpPendingExpired: 'This sign-in has expired or was already completed. Sign in again.',
  // Roles
  ownerOnly: 'Only the account owner can perform this action.',
  adminOnly: 'Only the admin can perform this action.',
  orphansAdminOnly: 'Only the first user can review orphaned files',
  orphansNothingSelected: 'Select at least one orphan to delete',
  desktopOnly: 'This instance is configured for desktop app access only.',
  // MFA
  mfaAlreadyEnabled: 'MFA is already enabled',
  mfaNotEnabled: 'MFA is not enabled',
  mfaSetupFirst: 'Start MFA setup first (POST /api/mfa/setup)',
  // Users
  subUserNotFound: 'Sub-user not found',
  userNotFound: 'User not found',
  loginGone: 'This login was deleted while the request was handled (its owner removed it): nothing was saved.',
  invitationNotFound: 'This invitation link is not valid: ask the administrator for a new one',
  invitationUsed: 'This invitation was already used: sign in with the password set then, or ask the administrator for a new one',
  invitationExpired: 'This invitation has expired: ask the administrator for a new one',
  invitationPending: 'An invitation to this address is already waiting: withdraw it first to send a new one',
  accountDisabled: 'This account is disabled: ask the administrator',
  firstAdminProtected: 'The first admin cannot be disabled or deleted',
  subUserOfAccount: "Sub-users are managed by their account's owner; disable or delete the owner's account instead",
  accountBeingDeleted: 'This account is being deleted',
  subUserSharesLimit: "Sub-users share their owner's storage limit; set the owner's limit instead",
  // Files
  itemNotFound: 'File or folder not found',
  notificationNotFound: 'Notification not found: mark only ids from GET /api/notifications of this account',
  albumNotFound: 'Album not found',
  albumPhotosOnly: 'Only photos and videos go in albums: folders and other files stay where they are',
  albumCoverNotInAlbum: 'The cover must be a photo or video in the album',
  shareBoundary: 'Items cannot be moved into or out of a folder shared with you: copy them instead.',
  sharedRootOwnerOnly: 'Only its owner can rename, move or trash the shared item itself.',
  viewerOnly: 'You can view this shared item but not change it. Ask its owner for the editor role.',
  memberCannotStar: "Shared items cannot be starred: stars belong to the item, and this one is its owner's.",
  memberCannotManage: 'Only the owner of this item can share it or change who it is shared with.',
  versionDeleteOwnerOnly: 'Only the owner of this file deletes its versions; in a team folder, the administrators of its editor groups.',
  peopleSharingOff: 'Sharing with people is turned off on this instance. Ask the admin to turn it back on.',
  noAccountWithEmail: 'No account with this email',
  folderNotFound: 'Folder not found',
  webhookNotFound: 'Webhook not found',
  webhookDeliveryNotFound: 'Delivery not found: the log keeps the newest 100 of each webhook',
  webhookFolderNotOwn: 'A webhook follows your own files: choose one of your folders, not one shared with you',
  nameTaken: NAME_TAKEN,
  moveIntoSelf: 'A folder cannot be moved into itself or one of its descendants',
  folderTooDeep: `Folders may nest at most ${MAX_FOLDER_DEPTH} levels deep: choose a folder nearer the top`,
  invalidCursor: 'Invalid cursor',
  invalidSearch: 'Invalid search query',
  searchHasNul: 'A search cannot contain a NUL character: remove it and search again',
  invalidJobId: 'Invalid background job ID',
  jobNotFound: 'Background file job not found',
  jobFailed: 'Background file operation failed',
  uploadAborted: 'Upload cancelled by client',
  requestAborted: 'Request cancelled by client',
  noFile: 'No file uploaded',
  // Sharing
  shareNotFound: 'Share link not found',
  shareExpired: 'This share link has expired',
  itemNotInShare: 'File or folder not found in this share',
  noThumbnail: 'This file has no thumbnail',
  shareNotAFolder: 'This share link is not a folder',
  shareDownloadsUsed: 'This share link has reached its download limit; ask its owner for a new one',
  sharePasswordRequired: 'This share link is protected by a password: unlock it first (POST /s/<token>/unlock with the password)',
  sharePasswordWrong: 'Wrong password for this share link',
  shareUploadNeedsFolder: 'Only a folder can be shared for uploads (mode upload or view_upload); this item is a file',
  shareNoUploads: 'This share link does not accept uploads',
  shareDropQuota: 'The owner of this folder has run out of storage space, so it cannot accept more files; let them know',
  notMultipart: 'Send the upload as multipart/form-data',
  malformedMultipart: 'The upload is not a valid multipart/form-data body',
  relativePathTooDeep: `A relative path may name at most ${RELATIVE_PATH_FOLDERS} folders; upload what lies deeper from a folder further down`,
  invalidFileName: 'Invalid file name: use at most 100 characters, no control characters and none of / \\ : * ? " < > |',
  onlyFiles: 'Only files can be replaced or derived from; this item is a folder',
  copyIntoSelf: 'A folder cannot be copied into itself or one of its descendants',
  trashAlreadyEmpty: 'Trash is already empty',
  rangeNotSatisfiable: 'Range not satisfiable',
  ifMatchFailed: 'If-Match failed: the resource changed',
  unmodifiedSinceFailed: 'If-Unmodified-Since failed: the resource changed after that date',
  // Resumable uploads (tus)
  tusNotFound: 'Upload not found',
  tusExpired: 'This upload expired before it was finished; start it again',
  tusLocked:
    'Another request is sending bytes to this upload right now; wait for it to end, ask for the offset (HEAD) and resume from there',
  tusNoFilename: 'Upload-Metadata must name the file: filename, base64-encoded',
  tusNotFinished: 'This upload is not finished yet',
  tusDropLinkBusy: 'This link has too many unfinished uploads at the moment; try again once some have finished',
  tusDropAddressBusy: 'You have too many unfinished uploads through share links; finish or cancel one, then try again',
  tusResealMismatch:
    'The bytes sent for this offset differ from those the server received at the same offset before it was interrupted; ' +
    'upload the file again from the start',
  tusVersion: 'This server speaks tus 1.0.0: send Tus-Resumable: 1.0.0',
  tusContentType: 'Send the bytes of a PATCH as Content-Type: application/offset+octet-stream',
  tusBadLength: 'Upload-Length must be a whole number of bytes (deferred lengths are not supported)',
  tusBadOffset: 'Upload-Offset must be a whole number of bytes',
  tusNoConcat: 'Concatenating uploads (Upload-Concat) is not supported: send the file as one upload, in as many PATCH requests as you like',
  tusOverride: 'POST to an upload sends its bytes or ends it: name the method in X-HTTP-Method-Override: PATCH or DELETE',
  tusBadMetadata: 'Upload-Metadata must be comma-separated pairs of a key and a base64 value (of UTF-8 text), each key once',
  // Document server
  docserverNotConfigured:
    'No document server is connected, so documents cannot be opened in the editor. Ask the administrator to set one up.',
  docserverNoOrigin:
    'Coffer does not know yet which address the document server should reach it at. Ask the administrator to sign in to Coffer once, or to set COFFER_PUBLIC_URL.',
  docserverFolder: 'Only files can be opened in the document editor; this item is a folder',
  docserverTypeMismatch: "The file's content does not match its extension, so it is not opened in the editor",
  docserverFileToken: 'Invalid or expired document link',
  docserverFileChanged: 'The file changed after the editor was opened; open it again',
  docserverSaveConflict:
    'the file was replaced by another client after the editor opened it, and versions are off, so saving would delete that content: download your edits from the editor, open the file again and apply them',
  docserverSavedInTrash:
    'the file was moved to the trash while it was being edited: this version is saved into it there; restore it from the trash to keep editing',
  docserverCallbackToken: 'Invalid document server callback token',
  docserverSessionNotFound: 'Document editing session not found',
  // Integrity
  storedObjectDamaged: 'The stored file failed its integrity check and was not served; restore it from a backup',
  storedObjectMissing: 'The stored file is missing from storage',
  storageMoving: 'Files are being moved to new storage; uploads and copies are paused. Try again in a few minutes.',
  storageUnavailable:
    'File storage is not answering right now; try again in a minute. The administrator finds the cause in the server log.',
  updateFeedUnavailable: 'Update feed unavailable',
  databaseBusy: 'The server is busy; try again in a few seconds',
  // Disk
  diskFull:
    'The server is running out of disk space, so it takes no new files for now. ' +
    'Free some space (empty the trash or delete files you no longer need) or ask the administrator to add storage.',
  diskFailing:
    "The server's disk is read-only or failing, so nothing can be saved right now. " +
    'Files already stored can still be read; the administrator finds the cause in the server log.',
} as const;

/** 403 to password sign-in and sign-up under OIDC_DISABLE_PASSWORD_LOGIN, naming the way in. */
export function passwordLoginDisabled(providerName: string): string {
  return `Password sign-in is turned off on this Coffer: sign in with ${providerName} instead`;
}

/** 499 (docs/api.md › Upload rules 4): the client hung up mid-upload. */
export function uploadAborted(): AppError {
  return new AppError(499, Messages.uploadAborted, { error: 'REQUEST_ABORTED' });
}

/** 499 for any other request whose client hung up before its body arrived: nothing was done. */
export function requestAborted(): AppError {
  return new AppError(499, Messages.requestAborted, { error: 'REQUEST_ABORTED' });
}

/** 409 (tus): the PATCH does not continue where the upload stands; the answer says where that is. */
export function tusOffsetMismatch(sent: number, offset: number): AppError {
  return new AppError(
    409,
    `Upload-Offset ${sent} does not match the ${offset} bytes this upload has received; resume from ${offset}`,
    { offset },
    { 'Upload-Offset': String(offset) },
  );
}

/** 413 (tus): a request carrying bytes past the length declared at creation. */
export function tusPastLength(length: number): AppError {
  return tooLarge(`This request sends more bytes than the upload's Upload-Length of ${length}`);
}

/** 413 for a file over the instance's max upload size setting. */
export function fileTooLarge(maxBytes: number): AppError {
  return tooLarge(`File too large. The maximum upload size is ${maxBytes} bytes.`);
}

/** 507: the data disk is (nearly) full; the message says what frees space. */
export function diskFull(): AppError {
  return new AppError(507, Messages.diskFull);
}

/** 503: the data disk refuses writes (read-only after an error, failing); it does not heal by itself, so clients wait a minute. */
export function diskFailing(): AppError {
  return new AppError(503, Messages.diskFailing, undefined, { 'Retry-After': '60' });
}

/** 507 (RFC 4918 §9.2.1): a PROPPATCH or COPY would take dead properties past their caps. */
export function propertiesFull(message: string): AppError {
  return new AppError(507, message);
}

/** 413 for a bulk or drop upload with more file parts than one request may carry. */
export function tooManyFiles(max: number): AppError {
  return tooLarge(`Too many files in one request: at most ${max}. Send the rest in another request.`);
}

/** 413 for a form whose text fields (everything but its files) are over the parser's budget. */
export function formTextTooLarge(limit: number): AppError {
  return tooLarge(`Too much text in the form: the fields besides the files may add up to at most ${limit} bytes in one request`);
}

/** The account's storage limit ran out: 413 on the API (docs/api.md › Errors), 507 over WebDAV (RFC 4918), which tells them apart by type. */
export class StorageLimitError extends AppError {
  constructor(required: number, available: number) {
    super(413, `Storage limit exceeded. Required: ${required}, available: ${Math.max(0, available)}.`);
  }
}

/** `Storage limit exceeded. Required: X, available: Y.` (docs/api.md › Errors, 413). */
export function storageLimitExceeded(required: number, available: number): AppError {
  return new StorageLimitError(required, available);
}

/** A start-up problem the operator can fix; printed as one line, exit code 1. */
export class StartupError extends Error {}

/** Why a server could not listen on host:port, in one line with what to do; any other error as it is. */
export function listenFailure(err: unknown, host: string, port: number): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE') return new StartupError(`port ${port} on ${host} is already in use`);
  if (code === 'EACCES') return new StartupError(`not allowed to listen on port ${port} (try a port above 1023)`);
  // Not an address of this machine, a name that does not resolve (EAGAIN: not now), a link-local address without its interface.
  if (code === 'EADDRNOTAVAIL' || code === 'ENOENT' || code === 'ENOTFOUND' || code === 'EAGAIN' || code === 'EINVAL') {
    return new StartupError(
      `cannot listen on ${host} (${code}): the address to bind (--host/HOST) must be one of this machine's, or a name that resolves to one, e.g. 0.0.0.0 for all of them or 127.0.0.1 for this machine only`,
    );
  }
  return err;
}

/** How long a statement waits for another connection's lock before it fails busy: every connection's busy_timeout. */
export const DATABASE_BUSY_TIMEOUT_MS = 5000;

/**
 * SQLITE_BUSY and its extended codes: another connection (the index writer's, a `coffer` command's, a backup's) held
 * a lock longer than the busy timeout, or committed after this transaction's snapshot. The statement, and the
 * transaction it was in, wrote nothing; the same work succeeds once that connection lets go.
 */
export function isDatabaseBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
