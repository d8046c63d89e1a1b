// A rule's condition judged on records held in memory, not stored rows: an audit entry's before and
// after, the body of a create that `app.can` is asked about. The sets the condition names (a
// memberOf's groups: `orgId in (select orgId from membership where userId = ?)`) are read once,
// so most rules are then decided in memory; a condition on a record the judged one references
// (`project.orgId` on a task) asks that record, as it is now, once per id.

import type { Kysely } from "kysely";
import type { DialectProfile } from "../db/dialect.ts";
import { type Condition, isSubSelect, mapFieldConditions, type RelatedCondition } from "../query/where.ts";
import { matchesWhere } from "../query/where-match.ts";
import { compileWhere } from "../query/where-sql.ts";
import type { ResourceRuntime } from "./runtime.ts";

type Judged = Readonly<Record<string, unknown>>;

const HOLDS: Condition = { kind: "and", items: [] };
const FAILS: Condition = { kind: "or", items: [] };
/** SQL's unknown: a comparison with a field no record has. */
const UNKNOWN: Condition = { kind: "field", field: "\u0000unknown", op: "eq", value: "" };

/**
 * `scope` with its sets read: whether a record matches it, decided in memory where it can be;
 * undefined where it names a referenced record (see recordJudge).
 */
export async function settledScope(rt: ResourceRuntime, scope: Condition): Promise<Condition> {
  return withSetsRead(rt.db, scope, rt.profile);
}

/** Whether each record given matches `scope`, asking the database only what memory cannot say. */
export async function recordJudge(
  rt: ResourceRuntime,
  scope: Condition,
): Promise<(record: Judged) => Promise<boolean>> {
  const settled = await settledScope(rt, scope);
  const asked = new WeakMap<RelatedCondition, Map<string, Promise<boolean>>>();
  return async (record) => {
    const decided = matchesWhere(settled, record, rt.ruleFields);
    if (decided !== undefined) return decided;
    return (
      matchesWhere(await withReferencesAsked(rt, settled, record, asked), record, rt.ruleFields) === true
    );
  };
}

/**
 * Each set a condition names (`in (select …)`), read now, as a list. SQL's `not in` of a set
 * holding a null is unknown for every value outside it, and so it stays here.
 */
async function withSetsRead(
  db: Kysely<any>,
  condition: Condition,
  profile: DialectProfile,
): Promise<Condition> {
  const reads = new Map<object, Promise<unknown[]>>();
  mapFieldConditions(condition, (c) => {
    if (!isSubSelect(c.value) || reads.has(c.value)) return c;
    const { table, column, where, fields } = c.value;
    let query = db.selectFrom(table).select(`${table}.${fields.get(column)?.column ?? column} as value`);
    if (where) query = query.where(compileWhere(where, fields, profile, "s").expression());
    reads.set(
      c.value,
      query.execute().then((rows) => rows.map((row) => row.value)),
    );
    return c;
  });
  const lists = new Map<object, unknown[]>();
  for (const [set, read] of reads) lists.set(set, await read);
  return mapFieldConditions(condition, (c) => {
    const list = isSubSelect(c.value) ? lists.get(c.value) : undefined;
    if (!list) return c;
    const values = list.filter((value) => value !== null && value !== undefined);
    const read: Condition = { ...c, value: values };
    return c.op === "nin" && values.length < list.length ? { kind: "and", items: [read, UNKNOWN] } : read;
  });
}

/**
 * `condition` with each condition on a referenced record answered: that record, by the id the
 * judged one holds, as it is now (none, or gone: the condition fails), each asked once.
 */
async function withReferencesAsked(
  rt: ResourceRuntime,
  condition: Condition,
  record: Judged,
  asked: WeakMap<RelatedCondition, Map<string, Promise<boolean>>>,
): Promise<Condition> {
  switch (condition.kind) {
    case "and":
    case "or": {
      const items: Condition[] = [];
      for (const item of condition.items) items.push(await withReferencesAsked(rt, item, record, asked));
      return { kind: condition.kind, items };
    }
    case "not":
      return { kind: "not", item: await withReferencesAsked(rt, condition.item, record, asked) };
    case "related": {
      const id = record[condition.via];
      if (typeof id !== "string" || condition.through || condition.scope === false) return FAILS;
      const answers = asked.get(condition) ?? new Map<string, Promise<boolean>>();
      asked.set(condition, answers);
      let answer = answers.get(id);
      if (!answer) {
        const target = rt.runtimeOf(condition.table);
        const where: Condition = condition.scope
          ? { kind: "and", items: [condition.item, condition.scope] }
          : condition.item;
        answer = target.store.findById(rt.db, id, where).then((found) => found !== undefined);
        answers.set(id, answer);
      }
      return (await answer) ? HOLDS : FAILS;
    }
    default:
      return condition;
  }
}
