import fs from 'node:fs';
import type { LogFormat, LogLevel } from './config.ts';

export type Fields = Record<string, unknown>;
export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
// syslog priorities, as the `<N>` prefix journald reads from a service's output (`journalctl -p err`).
const PRIORITY: Record<Exclude<LogLevel, 'silent'>, string> = { debug: '<7>', info: '<6>', warn: '<4>', error: '<3>' };
// Lines wait at most until the event loop's next turn, or until this many characters are waiting.
const FLUSH_AT = 64 * 1024;

let isoMs = -1;
let iso = '';

/** The time as an ISO string, formatted once per millisecond (many requests are logged within one). */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    iso = new Date(ms).toISOString();
  }
  return iso;
}

/** One line's JSON: the same bytes as `JSON.stringify({ time, level, msg, ...fields })`, without building that object. */
function encode(level: string, msg: string, fields: Fields | undefined): string {
  // A field named time, level or msg takes that key's place in the object: the general form keeps that.
  if (fields && ('time' in fields || 'level' in fields || 'msg' in fields)) {
    return JSON.stringify({ time: isoNow(), level, msg, ...fields });
  }
  const rest = fields ? JSON.stringify(fields) : '{}';
  return `{"time":"${isoNow()}","level":"${level}","msg":${JSON.stringify(msg)}${rest === '{}' ? '}' : `,${rest.slice(1)}`}`;
}

/**
 * Structured logs: one JSON object per line on stdout (errors on stderr). Stdout lines are written
 * together once per turn of the event loop instead of one write each (one per request at info level);
 * errors are written at once, and whatever waits is written before the process exits. The `journald`
 * format puts each line's syslog priority in front of it, so the journal files it under its level.
 */
export function createLogger(level: LogLevel, format: LogFormat = 'json'): Logger {
  const prefix = (lvl: Exclude<LogLevel, 'silent'>) => (format === 'journald' ? PRIORITY[lvl] : '');
  const min = RANK[level];
  let pending = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === '') return;
    const out = pending;
    pending = '';
    process.stdout.write(out);
  };
  if (min < RANK.error) {
    process.once('exit', () => {
      if (pending !== '') fs.writeSync(1, pending);
      pending = '';
    });
  }
  const write = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Fields) => {
    if (RANK[lvl] < min) return;
    const line = prefix(lvl) + encode(lvl, msg, fields);
    if (lvl === 'error') {
      flush();
      process.stderr.write(line + '\n');
      return;
    }
    pending += line + '\n';
    if (pending.length >= FLUSH_AT) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}
