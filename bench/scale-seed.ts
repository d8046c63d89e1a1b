// Seeds a table of products with SQL, fast: `rows` rows made by the database itself (a recursive
// CTE on SQLite, generate_series on PostgreSQL), the same rows for the API and the reference.
// Row n: id `p<n>` (zero-padded), name "<Word> <n>" with one row in 100,000 named "Zanzibar",
// price (n mod 1000) / 10, status active/inactive/draft in turn, createdAt one second apart.

import type Database from "better-sqlite3";

/** The rare term: 1 row in RARE_EVERY holds it. */
export const RARE_TERM = "zanzibar";
export const RARE_EVERY = 100_000;

const WORDS = ["Hat", "Scarf", "Glove", "Boot", "Sock", "Coat", "Belt", "Shirt"];

export function seedSqlite(db: Database.Database, rows: number): void {
  const word = `case n % 8 ${WORDS.map((w, i) => `when ${i} then '${w}'`).join(" ")} end`;
  db.exec(`with recursive seq(n) as (select 1 union all select n + 1 from seq where n < ${rows})
    insert into "product" ("id", "name", "price", "status", "createdAt", "updatedAt")
    select printf('p%09d', n),
      case when n % ${RARE_EVERY} = 0 then 'Zanzibar ' || n else ${word} || ' ' || n end,
      (n % 1000) / 10.0,
      case n % 3 when 0 then 'active' when 1 then 'inactive' else 'draft' end,
      strftime('%Y-%m-%dT%H:%M:%fZ', '2020-01-01', '+' || n || ' seconds'),
      strftime('%Y-%m-%dT%H:%M:%fZ', '2020-01-01', '+' || n || ' seconds')
    from seq`);
  db.exec("analyze");
}

export function seedPostgresSql(rows: number): string {
  const word = `case n % 8 ${WORDS.map((w, i) => `when ${i} then '${w}'`).join(" ")} end`;
  return `insert into "product" ("id", "name", "price", "status", "createdAt", "updatedAt")
    select 'p' || lpad(n::text, 9, '0'),
      case when n % ${RARE_EVERY} = 0 then 'Zanzibar ' || n else ${word} || ' ' || n end,
      (n % 1000) / 10.0,
      case n % 3 when 0 then 'active' when 1 then 'inactive' else 'draft' end,
      timestamptz '2020-01-01 00:00:00+00' + n * interval '1 second',
      timestamptz '2020-01-01 00:00:00+00' + n * interval '1 second'
    from generate_series(1, ${rows}) as n`;
}
