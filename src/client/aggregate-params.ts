// An aggregate request as query parameters: `{ count: true, sum: ["price"], groupBy: ["status"] }`
// → aggregate[count]=*, aggregate[sum]=price, groupBy=status. The client and app.api both write it
// with this, so a request means the same from either and from a hand-written URL. `where` is left
// to the caller: the client writes it as filter[…], app.api hands it over as an object.

const FUNCTIONS = ["countDistinct", "sum", "avg", "min", "max"] as const;
const PLAIN = ["search", "sortBy", "sortOrder", "limit"] as const;
const KNOWN = new Set<string>(["count", "groupBy", "where", ...FUNCTIONS, ...PLAIN]);

export function aggregateParams(input: Record<string, unknown>): Record<string, string> {
  const query: Record<string, string> = {};
  if (input.count === true) query["aggregate[count]"] = "*";
  for (const fn of FUNCTIONS) {
    const fields = input[fn];
    if (fields !== undefined)
      query[`aggregate[${fn}]`] = Array.isArray(fields) ? fields.join(",") : String(fields);
  }
  if (input.groupBy !== undefined)
    query.groupBy = Array.isArray(input.groupBy) ? input.groupBy.join(",") : String(input.groupBy);
  for (const name of PLAIN) if (input[name] !== undefined) query[name] = String(input[name]);
  // Anything else goes as it is, for the server to refuse by name (a 400, as on lists).
  for (const [name, value] of Object.entries(input))
    if (!KNOWN.has(name) && value !== undefined) query[name] = String(value);
  return query;
}
