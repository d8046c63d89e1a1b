// ISO 8601 dates and date-times as they arrive on the wire: in bodies, filters, cursors and
// query parameters. A date-time without an offset is read as UTC, never in the server's time zone:
// `new Date("2024-06-01T10:00")` would read it as local time, so the same request would store
// 10:00Z on one server and 14:00Z on another (TZ=America/New_York). A date alone is UTC already.

/** A date, or a date-time with or without seconds, fraction and offset (`Z`, `+02:00`, `+0200`). */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

const DATE_TIME_WITHOUT_OFFSET = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?$/;

/** The instant `text` names (an offset-less date-time in UTC), or undefined if it is not ISO 8601. */
export function dateFromIso(text: string): Date | undefined {
  if (!ISO_DATE.test(text) || !onTheCalendar(text)) return undefined;
  const date = new Date(DATE_TIME_WITHOUT_OFFSET.test(text) ? `${text.replace(" ", "T")}Z` : text);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Epoch milliseconds of an ISO 8601 text (offset-less as UTC); NaN when it is not one. */
export function isoTime(text: string): number {
  return dateFromIso(text)?.getTime() ?? Number.NaN;
}

/**
 * Whether the date is one the calendar has, and the hour one the day has: `Date` would read
 * `2024-02-31` as March 2 and `T24:00` as the next day, so a filter would quietly mean another day.
 */
function onTheCalendar(text: string): boolean {
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(5, 7));
  const day = Number(text.slice(8, 10));
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth &&
    (text.length <= 10 || Number(text.slice(11, 13)) < 24)
  );
}
