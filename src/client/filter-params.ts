// A list's `where` as query parameters in the bracket syntax (filter[price][gte]=10), which the
// server reads back (src/query/bracket-query.ts). app.api writes its `where` with this too, so a
// filter means the same from the client, from server code and from a hand-written URL.

/** `{ price: { gte: 10 } }` → `[["filter[price][gte]", "10"]]`. Lists become numbered keys, dates ISO strings, null `isNull`. */
export function flattenFilter(where: object): [string, string][] {
  const out: [string, string][] = [];
  const walk = (value: unknown, key: string): void => {
    if (value === undefined) return;
    if (value === null) out.push([`${key}[isNull]`, "true"]);
    else if (value instanceof Date) out.push([key, value.toISOString()]);
    else if (Array.isArray(value)) {
      // No value at all: `nin: []` (and `and: []`) keep every record, so they are left out; `in: []`
      // (and `or: []`) keep none, which a query string cannot say, so they go as an empty value
      // that the server refuses with a 400 naming them, never as no filter (every record).
      if (value.length === 0 && /\[(in|or)\]$/.test(key)) out.push([key, ""]);
      for (let i = 0; i < value.length; i++) walk(value[i], `${key}[${i}]`);
    } else if (typeof value === "object") for (const [k, v] of Object.entries(value)) walk(v, `${key}[${k}]`);
    else out.push([key, String(value)]);
  };
  walk(where, "filter");
  return out;
}
