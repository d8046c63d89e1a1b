// Issue 33, item 3: each engine is one folder (src/db/engines/<name>/), and what differs between
// engines is a member of its profile, so a new engine does not compile until it answers every
// member: how its driver's errors read and which catalog names its column types have among them.
// Each engine reads its own driver's errors, and no other's.

import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type DialectProfile, dialectProfile } from "../src/db/dialect.ts";
import { mysqlErrors } from "../src/db/engines/mysql/errors.ts";
import { postgresErrors } from "../src/db/engines/postgres/errors.ts";
import { sqliteErrors } from "../src/db/engines/sqlite/errors.ts";

const src = fileURLToPath(new URL("../src/", import.meta.url));

describe("a profile must answer for its driver's errors and its physical types", () => {
  it("leaving either out is a type error", () => {
    const { errors: _errors, ...withoutErrors } = dialectProfile("sqlite");
    // @ts-expect-error: a profile that does not say how its driver's errors read does not compile
    const noErrors: DialectProfile = withoutErrors;
    const { physicalTypes: _types, ...withoutTypes } = dialectProfile("postgres");
    // @ts-expect-error: nor one that does not name its column types
    const noTypes: DialectProfile = withoutTypes;
    const { misfit: _misfit, ...partial } = mysqlErrors;
    // @ts-expect-error: every question about errors needs an answer
    const noMisfit: DialectProfile = { ...dialectProfile("mysql"), errors: partial };
    expect([noErrors, noTypes, noMisfit]).toHaveLength(3);
  });

  it("every profile names a catalog type for every column type", () => {
    for (const name of ["sqlite", "postgres", "mysql"] as const) {
      const { physicalTypes } = dialectProfile(name);
      for (const type of ["text", "integer", "number", "boolean", "date", "json"] as const)
        expect(physicalTypes[type].length, `${name} ${type}`).toBeGreaterThan(0);
    }
  });
});

describe("each engine reads its own driver's errors", () => {
  const pgShutdown = { code: "57P01", message: "terminating connection due to administrator command" };
  const mysqlLost = {
    code: "PROTOCOL_CONNECTION_LOST",
    message: "Connection lost: The server closed the connection.",
  };
  const busy = { code: "SQLITE_BUSY", message: "database is locked" };

  it("unavailable: its own codes, any engine's network errors, and a cause wrapped by Kysely", () => {
    expect(postgresErrors.unavailable(pgShutdown)).toBe(true);
    expect(postgresErrors.unavailable(mysqlLost)).toBe(false);
    expect(mysqlErrors.unavailable(mysqlLost)).toBe(true);
    expect(mysqlErrors.unavailable({ errno: 2013 })).toBe(true);
    expect(mysqlErrors.unavailable(pgShutdown)).toBe(false);
    expect(sqliteErrors.unavailable(busy)).toBe(true);
    expect(sqliteErrors.unavailable(pgShutdown)).toBe(false);
    const refused = { code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:1" };
    for (const errors of [postgresErrors, mysqlErrors, sqliteErrors]) {
      expect(errors.unavailable(refused)).toBe(true);
      expect(errors.unavailable(new Error("wrapped", { cause: refused }))).toBe(true);
      expect(errors.unavailable(new Error("a bug"))).toBe(false);
      expect(errors.unavailable(null)).toBe(false);
    }
  });

  it("statement timeouts, values that do not fit, and foreign keys", () => {
    expect(postgresErrors.timedOut({ code: "57014" })).toBe(true);
    expect(mysqlErrors.timedOut({ errno: 1969 })).toBe(true);
    expect(mysqlErrors.timedOut({ code: "57014" })).toBe(false);
    expect(sqliteErrors.timedOut({ code: "57014" })).toBe(false);

    expect(postgresErrors.misfit({ code: "22001", column: "name" })).toEqual({ column: "name" });
    expect(postgresErrors.misfit({ code: "23505" })).toBeUndefined();
    expect(
      mysqlErrors.misfit({
        code: "ER_DATA_TOO_LONG",
        sqlMessage: "Data too long for column 'notes' at row 1",
      }),
    ).toEqual({ column: "notes" });
    expect(
      mysqlErrors.misfit({
        errno: 4025,
        sqlMessage: "CONSTRAINT `product.meta` failed for `crudkit`.`product`",
      }),
    ).toEqual({
      column: "meta",
    });
    expect(mysqlErrors.misfit({ code: "22001" })).toBeUndefined();
    expect(
      sqliteErrors.misfit({ code: "SQLITE_CONSTRAINT_CHECK", message: "CHECK constraint failed: price" }),
    ).toEqual({
      column: "price",
    });

    expect(postgresErrors.foreignKey({ code: "23503", constraint: "task_project_fk" })).toEqual({
      constraint: "task_project_fk",
    });
    expect(
      mysqlErrors.foreignKey({
        code: "ER_NO_REFERENCED_ROW_2",
        sqlMessage:
          "Cannot add or update a child row: a foreign key constraint fails (CONSTRAINT `task_project_fk` ...)",
      }),
    ).toEqual({ constraint: "task_project_fk" });
    expect(sqliteErrors.foreignKey({ code: "SQLITE_CONSTRAINT_FOREIGNKEY" })).toEqual({
      constraint: undefined,
    });
    expect(sqliteErrors.foreignKey({ code: "23503" })).toBeUndefined();
  });
});

it("no file outside src/db/ opens an engine's folder, and the record store names no engine", () => {
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = `${dir}${entry.name}`;
      if (entry.isDirectory()) {
        if (path !== `${src}db`) walk(`${path}/`);
      } else if (entry.name.endsWith(".ts") && /from "[^"]*db\/engines\//.test(readFileSync(path, "utf8")))
        offenders.push(path.slice(src.length));
    }
  };
  walk(src);
  expect(offenders).toEqual([]);
  for (const file of readdirSync(`${src}resource`).filter((f) => f.endsWith(".ts"))) {
    const text = readFileSync(`${src}resource/${file}`, "utf8");
    expect(text, file).not.toMatch(/\.name === "(sqlite|postgres|mysql)"|dialect === "/);
  }
});
