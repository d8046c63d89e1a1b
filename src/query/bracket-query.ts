// The bracket syntax filters travel in over HTTP, as Strapi, Directus and Payload users know it:
//   filter[status]=active  filter[price][gte]=10  filter[status][in]=active,draft
//   filter[or][0][status]=active&filter[or][1][price][lt]=5  filter[not][status]=draft
// `readFilter` reads it into an object for parseWhere; the client's `flattenFilter`
// (src/client/filter-params.ts) writes it, for the client and for app.api alike.

const PREFIX = "filter";
/** Deepest bracket path accepted, and most filter parameters in one query. */
const MAX_SEGMENTS = 12;
const MAX_PARAMETERS = 200;

/** Whether a query parameter belongs to the filter. */
export function isFilterParameter(name: string): boolean {
  return name.startsWith(`${PREFIX}[`);
}

/**
 * The filter parameters of a query as one object, or undefined when there are none. A malformed
 * name, a path both a value and a group, or too many parameters throw an Error whose message
 * names the parameter; callers turn it into their 400.
 */
export function readFilter(query: Readonly<Record<string, string | undefined>>): object | undefined {
  let root: Record<string, unknown> | undefined;
  let count = 0;
  for (const name of Object.keys(query)) {
    if (!isFilterParameter(name)) continue;
    const value = query[name];
    if (value === undefined) continue;
    if (++count > MAX_PARAMETERS) throw new Error(`a filter takes at most ${MAX_PARAMETERS} parameters`);
    const segments = segmentsOf(name);
    root ??= Object.create(null) as Record<string, unknown>;
    let node = root;
    const last = segments.length - 1;
    for (let i = 0; i < last; i++) {
      const existing = node[segments[i]!];
      if (typeof existing === "string") throw new Error(`${clip(name)} is both a value and a group`);
      if (existing === undefined) node[segments[i]!] = Object.create(null);
      node = node[segments[i]!] as Record<string, unknown>;
    }
    if (node[segments[last]!] !== undefined) throw new Error(`${clip(name)} is given twice`);
    node[segments[last]!] = value;
  }
  return root;
}

/** `filter[a][b]` → `["a", "b"]`. */
function segmentsOf(name: string): string[] {
  const match = /^filter((?:\[[^[\]]*\])+)$/.exec(name);
  if (!match) throw new Error(`${clip(name)} is not of the form filter[field] or filter[field][operator]`);
  const segments = match[1]!.slice(1, -1).split("][");
  if (segments.length > MAX_SEGMENTS)
    throw new Error(`${clip(name)} nests deeper than ${MAX_SEGMENTS} brackets`);
  if (segments.some((s) => s === "")) throw new Error(`${clip(name)} has an empty bracket`);
  return segments;
}

function clip(name: string): string {
  const printable = name.replace(/[^\x20-\x7e]/g, "?");
  return printable.length > 60 ? `${printable.slice(0, 60)}…` : printable;
}
