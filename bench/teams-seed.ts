// Seeds the teams bench's tables with SQL, fast: every row made by the database itself (a
// recursive CTE on SQLite, generate_series on PostgreSQL), the same rows on both engines.
//   organization n (1–1,000): id o<n>; project n (1–10,000): id p<n>, in organization (n-1) mod 1,000 + 1;
//   user u (0–9,999): id u<u+1>, a member of the 3 organizations (u + 337k) mod 1,000 + 1, k = 0, 1, 2,
//     "owner" (u even) or "admin" (u odd) of the first, "member" of the other two: 30,000 memberships;
//   task n (1–rows): id t<n>, in project (n-1) mod 10,000 + 1, so in organization (n-1) mod 1,000 + 1
//     (every organization's tasks spread evenly over time), its orgId copied, createdAt n s after 2020.
// taskPlain holds the same rows as task.

import type Database from "better-sqlite3";

export const ORGS = 1_000;
export const PROJECTS = 10 * ORGS;
export const USERS = 10_000;
/** Each user's organizations: (u + STRIDE * k) mod ORGS, k < MEMBERSHIPS_PER_USER. */
export const MEMBERSHIPS_PER_USER = 3;
const STRIDE = 337;

/** The organizations (1-based) user `u` (0-based) belongs to; the first she owns or administers. */
export function orgsOf(u: number): number[] {
  return Array.from({ length: MEMBERSHIPS_PER_USER }, (_, k) => ((u + STRIDE * k) % ORGS) + 1);
}
export const userId = (u: number) => `u${String(u + 1).padStart(5, "0")}`;
export const orgId = (n: number) => `o${String(n).padStart(4, "0")}`;
export const taskId = (n: number) => `t${String(n).padStart(9, "0")}`;

interface Dialect {
  /** A series 1..count as a row source with column n. */
  series(count: number): { with: string; from: string };
  /** `prefix` and n zero-padded to `width`. */
  id(prefix: string, n: string, width: number): string;
  /** A timestamp `n` seconds after 2020-01-01. */
  at(n: string): string;
}

const SQLITE: Dialect = {
  series: (count) => ({
    with: `with recursive seq(n) as (select 1 union all select n + 1 from seq where n < ${count})`,
    from: "seq",
  }),
  id: (prefix, n, width) => `printf('${prefix}%0${width}d', ${n})`,
  at: (n) => `strftime('%Y-%m-%dT%H:%M:%fZ', '2020-01-01', '+' || (${n}) || ' seconds')`,
};

const POSTGRES: Dialect = {
  series: (count) => ({ with: "", from: `generate_series(1, ${count}) as seq(n)` }),
  id: (prefix, n, width) => `'${prefix}' || lpad((${n})::text, ${width}, '0')`,
  at: (n) => `timestamptz '2020-01-01 00:00:00+00' + (${n}) * interval '1 second'`,
};

/** One INSERT … SELECT per table, in the order their references need. */
function statements(d: Dialect, rows: number): string[] {
  const insert = (table: string, columns: string[], count: number, values: string[]) => {
    const { with: head, from } = d.series(count);
    const names = [...columns, "createdAt", "updatedAt"].map((c) => `"${c}"`).join(", ");
    return `${head} insert into "${table}" (${names}) select ${[...values, d.at("n"), d.at("n")].join(", ")} from ${from}`;
  };
  // Membership m (1-based) is user (m-1) / 3's k-th, k = (m-1) mod 3.
  const u = `((n - 1) / ${MEMBERSHIPS_PER_USER})`;
  const k = `((n - 1) % ${MEMBERSHIPS_PER_USER})`;
  const taskColumns = ["id", "title", "projectId", "orgId", "internalNotes"];
  const taskValues = [
    d.id("t", "n", 9),
    `'Task ' || n`,
    d.id("p", `(n - 1) % ${PROJECTS} + 1`, 5),
    d.id("o", `(n - 1) % ${ORGS} + 1`, 4),
    `'Internal notes on task ' || n`,
  ];
  return [
    insert("organization", ["id", "name"], ORGS, [d.id("o", "n", 4), `'Organization ' || n`]),
    insert("project", ["id", "title", "orgId"], PROJECTS, [
      d.id("p", "n", 5),
      `'Project ' || n`,
      d.id("o", `(n - 1) % ${ORGS} + 1`, 4),
    ]),
    insert("membership", ["id", "orgId", "userId", "role"], USERS * MEMBERSHIPS_PER_USER, [
      d.id("m", "n", 6),
      d.id("o", `(${u} + ${STRIDE} * ${k}) % ${ORGS} + 1`, 4),
      d.id("u", `${u} + 1`, 5),
      `case when ${k} > 0 then 'member' when ${u} % 2 = 0 then 'owner' else 'admin' end`,
    ]),
    insert("task", taskColumns, rows, taskValues),
    insert("taskPlain", taskColumns, rows, taskValues),
  ];
}

export function seedSqlite(db: Database.Database, rows: number): void {
  db.pragma("synchronous = off");
  // Room for the index on projectId, written at 10,000 places at once (a small cache thrashes).
  db.pragma("cache_size = -262144");
  db.transaction(() => {
    for (const statement of statements(SQLITE, rows)) db.exec(statement);
  })();
  db.exec("analyze");
}

/** The seed's statements for PostgreSQL, to run in one transaction. */
export function seedPostgresSql(rows: number): string[] {
  return statements(POSTGRES, rows);
}
