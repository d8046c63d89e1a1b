// A list's count as the pager says it: exactly when the API counted exactly, "about" otherwise.

import { t } from "./strings.ts";

/**
 * Up to this many rows `count=estimated` counts exactly (EXACT_UP_TO in src/resource/list-count.ts,
 * kept equal by test/admin.test.ts; not imported: that module is the server's).
 */
export const EXACT_COUNT_UP_TO = 10_000;

/** "42 rows" when the count is exact, "about 1,200,000 rows" when it may be the database's estimate. */
export function rowCount(total: number): string {
  return total <= EXACT_COUNT_UP_TO ? t.exactly(total) : t.about(total);
}
