// JSON for log lines, which must be written whatever a field holds.

/** JSON of a line's fields: a BigInt as its digits, a cycle as "[Circular]"; never throws. */
export function safeStringify(value: unknown): string {
  // The plain way first: a replacer function costs a call per key, on every request's line.
  try {
    return JSON.stringify(value);
  } catch {}
  const seen = new WeakSet<object>();
  try {
    return JSON.stringify(value, (_key, item: unknown) => {
      if (typeof item === "bigint") return item.toString();
      if (typeof item === "object" && item !== null) {
        if (seen.has(item)) return "[Circular]";
        seen.add(item);
      }
      return item;
    });
  } catch {
    return JSON.stringify(String(value));
  }
}
