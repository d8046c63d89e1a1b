// GET /<resource>/:id → 200 with the record and its ETag (304 to a matching If-None-Match).

import type { Kysely } from "kysely";
import type { Endpoint } from "../../core/endpoint.ts";
import { etagOf, Versioned } from "../../core/etag.ts";
import type { CachedRead } from "../../core/plugin.ts";
import { type Admission, admit, readsOtherTables, scopeKey } from "../admission.ts";
import { type ExpandNode, expandRecords, parseExpand } from "../expand.ts";
import { gatesOnly, withoutHidden } from "../field-access.ts";
import { runAll, runTransforming } from "../hooks.ts";
import { capitalize, hookContext, notFound, type ResourceRuntime, readsFor } from "../runtime.ts";

type ScopedRead = CachedRead & { admission: Admission; expand: ExpandNode[] | undefined; db: Kysely<any> };

export function readEndpoint(rt: ResourceRuntime): Endpoint {
  const { resource, hooks } = rt;
  // One function per endpoint, not a closure per request: it takes everything from `read`.
  const load = async (read: CachedRead) => {
    const { ctx, user, key: id, admission, expand, db } = read as ScopedRead;
    const { scope, hidden } = admission;
    const base =
      hooks.beforeRead.length || hooks.afterRead.length ? hookContext(ctx, rt, "read", user, id) : undefined;
    // Hidden fields are not even selected, unless hooks see the record (they see it whole).
    const unselected = hooks.afterRead.length ? gatesOnly(hidden) : hidden;
    // Outside the caller's rows is a missing id, and no hook learns of it.
    let record = scope ? await rt.store.findById(db, id, scope, unselected) : undefined;
    if (scope && !record) notFound(rt, id);
    if (hooks.beforeRead.length) await runAll(hooks.beforeRead, base!);
    record ??= await rt.store.findById(db, id, undefined, unselected);
    if (!record) notFound(rt, id);
    // The version is the stored record as this caller sees it. Hooks and expansions may change the
    // record in place, so then it is taken first.
    const stored = withoutHidden(record, hidden);
    if (!hooks.afterRead.length && !expand) return new Versioned(stored, stored, true);
    const version = etagOf(stored);
    if (hooks.afterRead.length) record = await runTransforming(hooks.afterRead, base!, "record", record);
    const visible = withoutHidden(record, hidden);
    if (expand) await expandRecords(rt, ctx, [visible], expand);
    return new Versioned(visible, version, !expand);
  };
  return {
    method: "GET",
    path: `/${resource.name}/:id`,
    operationName: `read${capitalize(resource.name)}`,
    async handler(ctx) {
      const admission = await admit(rt, ctx, "read");
      const id = ctx.params.id!;
      const expand = parseExpand(ctx.query.expand, rt, admission.hidden);
      // Server code always reads the database; HTTP callers may be answered from the cache, unless
      // they expand: other resources' records change without telling this one's cache.
      // Nor answers whose rules read other tables: those change without telling this cache either.
      const cached =
        rt.readCache !== undefined && ctx.source === "http" && !expand && !readsOtherTables(admission);
      const read: ScopedRead = {
        resource: resource.name,
        operation: "read",
        key: id,
        // Only a cache needs the scope as text.
        scope: rt.readCache ? scopeKey(admission) : "",
        user: admission.user,
        ctx,
        admission,
        expand,
        db: readsFor(ctx, cached),
      };
      return cached ? rt.readCache!.serve(read, load) : load(read);
    },
  };
}
