import type { Fields, Logger } from '../../src/log.ts';
import { eventually } from './eventually.ts';

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  fields: Fields;
}

/** A logger that keeps every line in memory, for tests that check what the server logged. */
export function memoryLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine['level']) =>
    (msg: string, fields: Fields = {}) =>
      void lines.push({ level, msg, fields });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/**
 * Waits until a line matching `pred` has been logged (access-log lines come after the response); up to 10 s, which fails
 * only a line that never comes (3 s can be short on a loaded machine).
 */
export function waitForLine(logger: { lines: LogLine[] }, pred: (l: LogLine) => boolean, ms = 10_000): Promise<LogLine> {
  return eventually(() => logger.lines.find(pred) ?? false, { timeoutMs: ms, intervalMs: 10, message: 'expected log line did not appear' });
}
