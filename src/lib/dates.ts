/**
 * Date.prototype.toUTCString and toISOString written out for the years 1970–9999: a PROPFIND formats two
 * dates per item, and the built-ins allocate a Date each (7% of a 10,000-item answer). Other times use them.
 * The share pages' long day likewise, without an Intl formatter (which reads the runtime's ICU data).
 */
const DAYS = ['Thu', 'Fri', 'Sat', 'Sun', 'Mon', 'Tue', 'Wed'];
const LONG_MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const TWO = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const DAY_MS = 86_400_000;
/** 10000-01-01T00:00:00Z: past it years take more than four digits. */
const END_MS = 253_402_300_800_000;

/** Year, month (1–12) and day of a day count since 1970-01-01 (the proleptic Gregorian calendar). */
function civil(days: number): { y: number; m: number; d: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d: doy - Math.floor((153 * mp + 2) / 5) + 1 };
}

const fast = (ms: number) => Number.isInteger(ms) && ms >= 0 && ms < END_MS;

/** The day each function formatted last and its text up to the time: rows listed together often share a day. */
let utcDay = -1;
let utcDate = '';
let isoDay = -1;
let isoDate = '';

/** `new Date(ms).toUTCString()`: "Mon, 01 Jan 2024 00:00:00 GMT". */
export function utcString(ms: number): string {
  if (!fast(ms)) return new Date(ms).toUTCString();
  const days = Math.floor(ms / DAY_MS);
  if (days !== utcDay) {
    const { y, m, d } = civil(days);
    utcDate = `${DAYS[days % 7]}, ${TWO[d]} ${MONTHS[m - 1]} ${y} `;
    utcDay = days;
  }
  const s = Math.floor((ms - days * DAY_MS) / 1000);
  return `${utcDate}${TWO[Math.floor(s / 3600)]}:${TWO[Math.floor(s / 60) % 60]}:${TWO[s % 60]} GMT`;
}

/** `new Date(ms).toISOString()`: "2024-01-01T00:00:00.000Z". */
export function isoString(ms: number): string {
  if (!fast(ms)) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY_MS);
  if (days !== isoDay) {
    const { y, m, d } = civil(days);
    isoDate = `${y}-${TWO[m]}-${TWO[d]}T`;
    isoDay = days;
  }
  const inDay = ms - days * DAY_MS;
  const s = Math.floor(inDay / 1000);
  const milli = inDay % 1000;
  return `${isoDate}${TWO[Math.floor(s / 3600)]}:${TWO[Math.floor(s / 60) % 60]}:${TWO[s % 60]}.${milli < 100 ? (milli < 10 ? '00' : '0') : ''}${milli}Z`;
}

let longDayFormat: Intl.DateTimeFormat | undefined;

/** The UTC day as `Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' })` says it: "6 December 2026". */
export function longUtcDay(ms: number): string {
  if (fast(ms)) {
    const { y, m, d } = civil(Math.floor(ms / DAY_MS));
    return `${d} ${LONG_MONTHS[m - 1]} ${y}`;
  }
  longDayFormat ??= new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
  return longDayFormat.format(ms);
}
