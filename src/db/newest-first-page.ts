// One page of a plugin table (uploaded files, audit entries), newest first with the id breaking
// ties, as `{ items, pagination }`. The filters are already on `query`.

import { type SelectQueryBuilder, sql } from "kysely";
import { type ListResult, paginate } from "../resource/list-query.ts";

export async function newestFirstPage<Item>(
  query: SelectQueryBuilder<any, any, object>,
  timeColumn: string,
  page: { page: number; limit: number },
  toItem: (row: Record<string, unknown>) => Item,
): Promise<ListResult<Item>> {
  const counted = await query.select(sql<number>`count(*)`.as("total")).executeTakeFirst();
  const rows = await query
    .selectAll()
    .orderBy(timeColumn, "desc")
    .orderBy("id", "desc")
    .limit(page.limit)
    .offset((page.page - 1) * page.limit)
    .execute();
  return paginate(rows.map(toItem), Number(counted?.total ?? 0), page);
}
