/** The one error type services throw; the HTTP layer turns it into `{message, ...extra}` with `status`. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const badRequest = (message: string, extra?: Record<string, unknown>) => new AppError(400, message, extra);
export const unauthorized = (message: string) => new AppError(401, message);
export const forbidden = (message: string, extra?: Record<string, unknown>) => new AppError(403, message, extra);
export const notFound = (message: string) => new AppError(404, message);
export const conflict = (message: string) => new AppError(409, message);
export const tooLarge = (message: string) => new AppError(413, message);

export interface ValidationDetail {
  field: string;
  message: string;
}
export const validationFailed = (details: ValidationDetail[]) =>
  new AppError(422, Messages.validationFailed, { details });

/** Strings clients match on (SPEC.md and COMPAT.md), kept in one place. */
export const Messages = {
  validationFailed: 'Validation failed',
  notFoundRoute: 'Not found',
  internal: 'Internal server error',
  bodyTooLarge: 'Request body too large (the limit for JSON bodies is 1 MiB)',
  invalidJson: 'Request body is not valid JSON',
  tooManyRequests: 'Too many requests, please try again later',
  queueUnavailable: 'Background worker queue is unavailable',
  crossOrigin: 'Cross-origin request refused',
} as const;
