// `filter[author.name][contains]=ann`: a condition on the record a reference points at becomes an
// EXISTS over the referenced table (where-sql.ts), under the caller's read rule on that resource.
// A field her field rules hide there is refused like an unknown one.

import type { EndpointContext } from "../core/endpoint.ts";
import { APIError } from "../core/errors.ts";
import type { Condition, FilterField } from "../query/where.ts";
import { hiddenSomewhere } from "./field-access.ts";
import { type Readers, readerOf } from "./related-access.ts";
import type { ResourceRuntime } from "./runtime.ts";

/** Whether a filter names a field of a referenced record. */
export function namesRelatedFields(condition: Condition, fields: ReadonlyMap<string, FilterField>): boolean {
  if (condition.kind === "field") return fields.get(condition.field)?.via !== undefined;
  if (condition.kind === "not") return namesRelatedFields(condition.item, fields);
  if (condition.kind === "related") return true;
  return condition.items.some((item) => namesRelatedFields(item, fields));
}

/** The filter with each condition on a referenced record turned into a scoped related condition. */
export async function scopeRelatedFilters(
  condition: Condition,
  rt: ResourceRuntime,
  ctx: EndpointContext,
  fields: ReadonlyMap<string, FilterField>,
  readers: Readers = new Map(),
): Promise<Condition> {
  switch (condition.kind) {
    case "and":
    case "or": {
      const items: Condition[] = [];
      for (const item of condition.items)
        items.push(await scopeRelatedFilters(item, rt, ctx, fields, readers));
      return { kind: condition.kind, items };
    }
    case "not":
      return { kind: "not", item: await scopeRelatedFilters(condition.item, rt, ctx, fields, readers) };
    case "related":
      return condition;
    case "field": {
      const via = fields.get(condition.field)?.via;
      if (!via) return condition;
      const target = rt.runtimeOf(via.target);
      const reader = await readerOf(target, ctx, readers);
      // A field she reads on some rows only is not filtered on through a relation either.
      if (reader && hiddenSomewhere(reader.hidden).has(via.targetField)) {
        const path = `filter.${condition.field}`;
        throw new APIError("BAD_REQUEST", `${path} is not a field you can filter on.`, {
          details: [{ path, message: "is not a field you can filter on." }],
        });
      }
      return {
        kind: "related",
        from: rt.resource.name,
        via: via.field,
        through: via.through,
        table: target.resource.name,
        fields: target.ruleFields,
        item: { kind: "field", field: via.targetField, op: condition.op, value: condition.value },
        scope: reader ? reader.scope : false,
      };
    }
  }
}
