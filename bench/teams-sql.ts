// What the database alone allows for the teams bench's SQLite targets (issue 45): the statements a
// hand-written app on the same tables would run, through better-sqlite3 with no HTTP and no
// crudkit, timed the way the bench compares its scenarios (CPU per request, same members, rounds
// interleaved). Where this ratio already misses a target, no API on these tables can meet it: the
// gap is the database's work, not crudkit's.
//   1 against 2: the first page and its count (count=estimated counts exactly on SQLite) through
//     the project's organization, against the copied orgId. The copied column's index holds each
//     organization's tasks in the page's order, so the sort reads about 21 rows of each of her 3
//     organizations; through projects it reads 21 of each of 30 projects, and the count walks 30
//     index ranges instead of 3.
//   5 against 6: a 20-row page with internalNotes gated per row (owner or admin of the task's
//     organization) against the same page without the field. Both in the cheapest form found:
//     the page's rowids read from the covering index, the rows (and the gate) read after the LIMIT.

import Database from "better-sqlite3";
import { MEMBERSHIPS_PER_USER, orgId, orgsOf, USERS, userId } from "./teams-seed.ts";

const COLUMNS = `t."id", t."title", t."projectId", t."orgId", t."createdAt", t."updatedAt"`;
const ORDER = `order by "createdAt" desc, "id" desc limit 21`;
const HER_PROJECTS = `select "id" from "project" where "orgId" in (select "orgId" from "membership" where "userId" = ?)`;
const MANAGED_PROJECTS = `select "id" from "project" where "orgId" in
  (select "orgId" from "membership" where "userId" = ? and "role" in ('owner', 'admin'))`;
const ORG_SLOTS = Array(MEMBERSHIPS_PER_USER).fill("?").join(", ");
/** The page's rows read by rowid after the LIMIT, from the covering index's first 21. */
const late = (where: string, select: string) =>
  `select ${select} from (select "rowid" as r from "task" where ${where} ${ORDER}) as k
    join "task" as t on t."rowid" = k.r order by t."createdAt" desc, t."id" desc`;

/** Statements run for one request, each with its arguments for member `u`. */
type Work = [sql: string, args: (u: number) => unknown[]][];
const her = (u: number) => [userId(u)];
const orgsOfMember = (u: number) => orgsOf(u).map(orgId);

const PAIRS: { measured: string; baseline: string; work: [Work, Work]; target: string }[] = [
  {
    measured: "1. first page, memberOf",
    baseline: "2. first page, copied orgId",
    target: "req/s ratio ≥ 0.80",
    work: [
      [
        [`select ${COLUMNS} from "task" as t where t."projectId" in (${HER_PROJECTS}) ${ORDER}`, her],
        [`select count(*) from "task" where "projectId" in (${HER_PROJECTS})`, her],
      ],
      [
        [`select ${COLUMNS} from "taskPlain" as t where t."orgId" in (${ORG_SLOTS}) ${ORDER}`, orgsOfMember],
        [`select count(*) from "taskPlain" where "orgId" in (${ORG_SLOTS})`, orgsOfMember],
      ],
    ],
  },
  {
    measured: "5. page, record-aware field rule",
    baseline: "6. page, plain hidden field",
    target: "CPU ratio ≤ 1.10",
    work: [
      [
        [
          late(
            `"projectId" in (${HER_PROJECTS})`,
            `${COLUMNS}, case when t."projectId" in (${MANAGED_PROJECTS}) then t."internalNotes" end as "internalNotes",
              t."projectId" in (${MANAGED_PROJECTS}) as "notesShown"`,
          ),
          (u) => [userId(u), userId(u), userId(u)],
        ],
      ],
      [[late(`"projectId" in (${HER_PROJECTS})`, COLUMNS), her]],
    ],
  },
];

const ROUNDS = 5;
const REQUESTS = 2_000;

/** µs of CPU per request for `work`, over members taken in a fixed spread. */
function cpuPerRequest(db: Database.Database, work: Work): number {
  const statements = work.map(([text, args]) => [db.prepare(text), args] as const);
  const member = (i: number) => (i * 7919) % USERS;
  for (let i = 0; i < 200; i++) for (const [statement, args] of statements) statement.all(...args(member(i)));
  const started = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++)
    for (const [statement, args] of statements) statement.all(...args(member(i)));
  const used = process.cpuUsage(started);
  return (used.user + used.system) / REQUESTS;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Prints, for each SQLite target, the ratio of the statements alone. */
export function printSqlAlone(file: string): void {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    console.log(
      `\nThe same targets for the SQL alone (better-sqlite3, no HTTP, no crudkit; the statements a hand-written app runs; CPU µs per request, medians of ${ROUNDS} rounds):`,
    );
    for (const pair of PAIRS) {
      const times: [number[], number[]] = [[], []];
      for (let round = 0; round < ROUNDS; round++)
        for (const side of [0, 1] as const) times[side].push(cpuPerRequest(db, pair.work[side]));
      const [measured, baseline] = times.map(median) as [number, number];
      // On one thread, CPU per request is what bounds req/s: the req/s ratio is the inverse.
      const ratio = pair.target.startsWith("req/s") ? baseline / measured : measured / baseline;
      console.log(
        `  ${pair.measured}: ${measured.toFixed(0)} µs, ${pair.baseline}: ${baseline.toFixed(0)} µs; ` +
          `${pair.target.replace(/ [≤≥].*/, "")} ${ratio.toFixed(2)} (target ${pair.target.replace(/^.* ([≤≥])/, "$1")})`,
      );
    }
  } finally {
    db.close();
  }
}
