// The indexes a memberOf path needs on the way to its group. A rule such as memberOf(…, { path:
// "project.orgId" }) on a task reads, for each task, its project by id for one field, orgId. A
// primary key alone answers that with two lookups on SQLite (the key's index, then the row) and an
// index scan plus a heap fetch on PostgreSQL; an index on (id, orgId) answers it from the index
// alone, which halves the cost of a read by id under the rule (issue 45's bench).

import { memberOfPath } from "./member-of.ts";
import type { RelationGraph } from "./relations.ts";
import type { AnyResource } from "./types.ts";

/**
 * For each resource a memberOf path passes through, the (id, field) indexes that path reads it
 * by: `project.orgId` on task gives project (id, orgId); `task.project.orgId` on a comment gives
 * task (id, projectId) and project (id, orgId).
 */
export function ruleIndexes(
  resources: readonly AnyResource[],
  relations: RelationGraph,
): Map<string, string[][]> {
  const needed = new Map<string, string[][]>();
  const add = (resource: string, columns: string[]) => {
    const list = needed.get(resource) ?? [];
    if (!list.some((c) => c.join() === columns.join())) list.push(columns);
    needed.set(resource, list);
  };
  for (const resource of resources)
    for (const path of memberOfPaths(resource)) {
      const hops = path.split(".");
      let from = resource.name;
      for (let i = 0; i < hops.length - 1; i++) {
        const relation = relations.expandable(from).get(hops[i]!);
        if (relation?.kind !== "forward") break;
        // The column read on the target: the last hop's field, or the reference the next hop follows.
        const next = hops[i + 1]!;
        const onward = i + 2 < hops.length ? relations.expandable(relation.target).get(next) : undefined;
        const column = onward?.kind === "forward" ? onward.field : next;
        add(relation.target, ["id", column]);
        from = relation.target;
      }
    }
  return needed;
}

/** The paths of the memberOf rules a resource's access holds, by operation and by field. */
function memberOfPaths(resource: AnyResource): Set<string> {
  const access = resource.access;
  const rules: unknown[] = [access.read, access.list, access.update, access.delete];
  for (const field of Object.values(access.fields ?? {}) as (
    | { read?: unknown; write?: unknown }
    | undefined
  )[])
    rules.push(field?.read, field?.write);
  const paths = new Set<string>();
  for (const rule of rules) {
    const path = memberOfPath(rule);
    if (path?.includes(".")) paths.add(path);
  }
  return paths;
}
