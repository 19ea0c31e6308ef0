// A scan that changes more than this publishes no event per item (a first scan of 100,000 files would flood every stream).
export const EVENTS_PER_SCAN = 200;

/**
 * Whether one summary event stands in for a library scan's changes (its first scan's, or past EVENTS_PER_SCAN):
 * the rule of the scanning process and of a server announcing the scan another process made (OutsideChanges).
 */
export const scanSummarized = (first: boolean, count: number): boolean => first || count > EVENTS_PER_SCAN;

/** The summary event's data, a `file.updated` of the library folder: clients list again. */
export const scanSummary = (count: number) => ({ action: 'library-scan', count });
