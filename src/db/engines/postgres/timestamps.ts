// timestamptz values from PostgreSQL, read straight into the ISO 8601 text records carry.
//
// pg's default turns `2024-06-01 10:00:00.123456+00` into a Date through a general regular
// expression, and the record codec then turns that Date back into text: on a page of 20 rows that
// was about a tenth of a list's CPU. A server whose TimeZone is UTC (the default of the official
// images and of hosted PostgreSQL) sends one fixed layout under DateStyle ISO, which maps onto
// `toISOString()`'s by moving characters. Anything else (another time zone, BC, years past 9999,
// infinity, another DateStyle) goes through pg's own parser as before. The session's time zone is
// left alone: raw SQL in custom endpoints keeps the server's.

/** `YYYY-MM-DD HH:MM:SS` then an optional `.f` (1–6 digits), then `+00`. */
const PLAIN_LENGTH = 19;

/**
 * A timestamptz's text as `toISOString()` would give it (milliseconds, `Z`), or undefined when it
 * is not a UTC instant in PostgreSQL's ISO layout.
 *
 * @example
 * isoFromTimestamptz("2024-06-01 10:00:00.5+00"); // "2024-06-01T10:00:00.500Z"
 */
export function isoFromTimestamptz(text: string): string | undefined {
  const end = text.length - 3;
  if (end < PLAIN_LENGTH || text.charCodeAt(10) !== 32 || !text.endsWith("+00")) return undefined;
  if (!digitsAt(text, 0, 4) || text.charCodeAt(4) !== 45 || !digitsAt(text, 5, 2)) return undefined;
  if (text.charCodeAt(7) !== 45 || !digitsAt(text, 8, 2) || !digitsAt(text, 11, 2)) return undefined;
  if (text.charCodeAt(13) !== 58 || !digitsAt(text, 14, 2) || text.charCodeAt(16) !== 58) return undefined;
  if (!digitsAt(text, 17, 2)) return undefined;
  const day = text.slice(0, 10);
  const time = text.slice(11, PLAIN_LENGTH);
  if (end === PLAIN_LENGTH) return `${day}T${time}.000Z`;
  const digits = end - PLAIN_LENGTH - 1;
  if (text.charCodeAt(PLAIN_LENGTH) !== 46 || digits < 1 || digits > 6) return undefined;
  if (!digitsAt(text, PLAIN_LENGTH + 1, digits)) return undefined;
  // Milliseconds are the first three digits: the Date route truncates the rest the same way.
  const fraction = PLAIN_LENGTH + 1;
  const millis = text.slice(fraction, fraction + Math.min(digits, 3)).padEnd(3, "0");
  return `${day}T${time}.${millis}Z`;
}

function digitsAt(text: string, from: number, count: number): boolean {
  for (let i = from; i < from + count; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
