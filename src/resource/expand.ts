// `expand`: related records beside the ids that point at them, in one query per relation per
// request whatever the number of records. Every expanded record passes its own resource's read
// rule (its `Where` is part of the query) and loses the fields its field rules hide from the
// caller; a record she may not read expands to null (or is left out of a reverse list).

import type { EndpointContext } from "../core/endpoint.ts";
import { APIError } from "../core/errors.ts";
import type { Admission } from "./admission.ts";
import { hiddenSomewhere, withoutHidden } from "./field-access.ts";
import { type Readers, readerOf } from "./related-access.ts";
import { IDS_PER_STATEMENT } from "./related-reads.ts";
import type { Relation, ReverseRelation } from "./relations.ts";
import type { ResourceRuntime } from "./runtime.ts";

type Row = Record<string, unknown>;

export interface ExpandNode {
  relation: Relation;
  children: ExpandNode[];
}

/** How deep `expand` goes: `author.company.country`. */
export const MAX_EXPAND_DEPTH = 3;
const MAX_PATHS = 16;
const MAX_LENGTH = 1000;

/**
 * `expand=author,comments.author` as a tree of relations, checked: every name is a relation of
 * the resource it is read on, at most 3 deep. A relation whose field the caller may not read is
 * refused like an unknown one, so the answer says nothing about hidden fields.
 */
export function parseExpand(
  text: string | undefined,
  rt: ResourceRuntime,
  hidden: ReadonlySet<string>,
): ExpandNode[] | undefined {
  if (text === undefined || text === "") return undefined;
  if (text.length > MAX_LENGTH) throw badExpand(`"expand" is longer than ${MAX_LENGTH} characters.`);
  const paths = text.split(",");
  if (paths.length > MAX_PATHS) throw badExpand(`"expand" names more than ${MAX_PATHS} relations.`);
  const roots: ExpandNode[] = [];
  for (const path of paths) {
    const names = path.split(".");
    if (names.length > MAX_EXPAND_DEPTH)
      throw badExpand(`"expand=${shown(path)}" goes deeper than ${MAX_EXPAND_DEPTH} relations.`);
    let level = roots;
    let resource: ResourceRuntime | undefined = rt;
    for (const [depth, name] of names.entries()) {
      const relations: ReadonlyMap<string, Relation> = resource
        ? rt.relations.expandable(resource.resource.name)
        : new Map();
      const relation = relations.get(name);
      const fieldHidden =
        depth === 0 && relation && relation.kind !== "reverse" && hiddenSomewhere(hidden).has(relation.field);
      if (!relation || fieldHidden) {
        const known = [...relations.keys()].filter(
          (n) => depth > 0 || !hiddenRelation(relations.get(n)!, hidden),
        );
        throw badExpand(
          `Cannot expand "${shown(name)}" on "${resource?.resource.name ?? "a file"}": it is not one of its relations` +
            (known.length ? ` (${known.join(", ")}).` : " (it has none)."),
        );
      }
      let node = level.find((n) => n.relation === relation);
      if (!node) {
        node = { relation, children: [] };
        level.push(node);
      }
      level = node.children;
      resource =
        relation.kind === "forward" || relation.kind === "list"
          ? rt.runtimeOf(relation.target)
          : relation.kind === "reverse"
            ? rt.runtimeOf(relation.source)
            : undefined;
    }
  }
  return roots;
}

/** Expands `records` (of `rt`'s resource, already stripped of hidden fields) in place. */
export async function expandRecords(
  rt: ResourceRuntime,
  ctx: EndpointContext,
  records: readonly Row[],
  nodes: readonly ExpandNode[],
  /** The read admissions of the request so far (a relation filter's), shared. */
  readers: Readers = new Map(),
): Promise<void> {
  await expandLevel(rt, ctx, records, nodes, readers);
}

async function expandLevel(
  rt: ResourceRuntime,
  ctx: EndpointContext,
  records: readonly Row[],
  nodes: readonly ExpandNode[],
  readers: Readers,
): Promise<void> {
  if (records.length === 0) return;
  for (const { relation, children } of nodes) {
    if (relation.kind === "forward") {
      const target = rt.runtimeOf(relation.target);
      const ids = distinct(records.map((r) => r[relation.field]));
      const reader = ids.length ? await readerOf(target, ctx, readers) : null;
      const found = reader
        ? await target.store.related.byIds(ctx.readDb ?? ctx.db, ids, reader.scope, reader.hidden)
        : [];
      const visible = found.map((r) => withoutHidden(r, reader!.hidden));
      await expandLevel(target, ctx, visible, children, readers);
      const byId = new Map(visible.map((r) => [r.id, r]));
      for (const record of records) record[relation.name] = byId.get(record[relation.field]) ?? null;
    } else if (relation.kind === "list") {
      // A list of ids: the records the caller may read, in the list's order (the others left out).
      const target = rt.runtimeOf(relation.target);
      const ids = distinct(
        records.flatMap((r) => (Array.isArray(r[relation.field]) ? (r[relation.field] as unknown[]) : [])),
      );
      const reader = ids.length ? await readerOf(target, ctx, readers) : null;
      // A page's lists may name more ids than a statement may bind: a batch at a time.
      const found: Row[] = [];
      for (let i = 0; reader && i < ids.length; i += IDS_PER_STATEMENT)
        for (const record of await target.store.related.byIds(
          ctx.readDb ?? ctx.db,
          ids.slice(i, i + IDS_PER_STATEMENT),
          reader.scope,
          reader.hidden,
        ))
          found.push(record);
      const visible = found.map((r) => withoutHidden(r, reader!.hidden));
      await expandLevel(target, ctx, visible, children, readers);
      const byId = new Map(visible.map((r) => [r.id, r]));
      for (const record of records) {
        const listed = Array.isArray(record[relation.field]) ? (record[relation.field] as unknown[]) : [];
        record[relation.name] = listed.flatMap((id) => byId.get(id) ?? []);
      }
    } else if (relation.kind === "reverse") {
      const source = rt.runtimeOf(relation.source);
      const reader = await readerOf(source, ctx, readers);
      // Who points at a record is only shown to a caller who may read the pointing field.
      const readable = reader && !hiddenSomewhere(reader.hidden).has(relation.field) ? reader : null;
      const ids = distinct(records.map((r) => r.id));
      const found = readable ? await childrenOf(source, ctx, relation, ids, readable) : [];
      const byParent = new Map<unknown, Row[]>();
      for (const { parent, record } of found) {
        if (!byParent.has(parent)) byParent.set(parent, []);
        byParent.get(parent)!.push(withoutHidden(record, readable!.hidden));
      }
      await expandLevel(source, ctx, [...byParent.values()].flat(), children, readers);
      for (const record of records) record[relation.name] = byParent.get(record.id) ?? [];
    } else {
      // A file: its record, under the caller's read rule on files.
      const ids = distinct(records.map((r) => r[relation.field]));
      const found = rt.files && ids.length ? await rt.files.read(ctx, ids) : [];
      const byId = new Map(found.map((f) => [f.id, f]));
      for (const record of records)
        record[relation.name] = byId.get(record[relation.field] as string) ?? null;
    }
  }
}

/** The records of `source` pointing at the parents: by a reference, or in a list of ids. */
async function childrenOf(
  source: ResourceRuntime,
  ctx: EndpointContext,
  relation: ReverseRelation,
  parents: readonly string[],
  reader: Pick<Admission, "scope" | "hidden">,
): Promise<{ parent: unknown; record: Row }[]> {
  const reads = source.store.related;
  const found: { parent: unknown; record: Row }[] = [];
  // A page of lists may name more parents than a statement may bind: a batch at a time (each
  // parent's records are ranked on their own, so the batches need no merging).
  for (let i = 0; i < parents.length; i += IDS_PER_STATEMENT) {
    const batch = parents.slice(i, i + IDS_PER_STATEMENT);
    if (relation.through)
      for (const listed of await reads.byListers(
        ctx.readDb ?? ctx.db,
        relation.through,
        batch,
        relation,
        reader.scope,
        reader.hidden,
      ))
        found.push(listed);
    else
      for (const record of await reads.byParents(
        ctx.readDb ?? ctx.db,
        relation.field,
        batch,
        relation,
        reader.scope,
        reader.hidden,
      ))
        found.push({ parent: record[relation.field], record });
  }
  return found;
}

function distinct(values: readonly unknown[]): string[] {
  return [...new Set(values.filter((v): v is string => typeof v === "string"))];
}

function hiddenRelation(relation: Relation, hidden: ReadonlySet<string>): boolean {
  return relation.kind !== "reverse" && hiddenSomewhere(hidden).has(relation.field);
}

function shown(text: string): string {
  return (text.length > 60 ? `${text.slice(0, 60)}…` : text).replace(/[^\x20-\x7e]/g, "?");
}

function badExpand(message: string): APIError {
  return new APIError("BAD_REQUEST", message);
}
