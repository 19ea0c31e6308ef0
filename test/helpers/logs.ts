import type { Fields, Logger } from '../../src/log.ts';

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

/** Waits until a line matching `pred` has been logged (access-log lines come after the response). */
export async function waitForLine(logger: { lines: LogLine[] }, pred: (l: LogLine) => boolean, ms = 3000): Promise<LogLine> {
  const deadline = Date.now() + ms;
  for (;;) {
    const line = logger.lines.find(pred);
    if (line) return line;
    if (Date.now() > deadline) throw new Error('expected log line did not appear');
    await Bun.sleep(10);
  }
}
