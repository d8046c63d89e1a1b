// One page of a plugin table (uploaded files, audit entries), newest first with the id breaking
// ties, as `{ items, pagination }`. The filters are already on `query`.

import { type SelectQueryBuilder, sql } from "kysely";
import { type CountMode, type ListResult, paginate } from "./list-query.ts";

export async function newestFirstPage<Item>(
  query: SelectQueryBuilder<any, any, object>,
  timeColumn: string,
  page: { page: number; limit: number; count?: CountMode },
  toItem: (row: Record<string, unknown>) => Item,
): Promise<ListResult<Item>> {
  // Plugin tables count exactly, or not at all (`count=none`: one row more says if a page follows).
  const uncounted = page.count === "none";
  const counted = uncounted
    ? undefined
    : await query.select(sql<number>`count(*)`.as("total")).executeTakeFirst();
  const rows = await query
    .selectAll()
    .orderBy(timeColumn, "desc")
    .orderBy("id", "desc")
    .limit(uncounted ? page.limit + 1 : page.limit)
    .offset((page.page - 1) * page.limit)
    .execute();
  const more = rows.length > page.limit;
  const items = (more ? rows.slice(0, page.limit) : rows).map(toItem);
  return paginate(items, uncounted ? null : Number(counted?.total ?? 0), page, more);
}
