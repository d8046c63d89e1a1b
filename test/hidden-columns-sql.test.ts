// Issue 33, item 6: a field the caller may not read is not selected at all, not only stripped
// afterwards. MariaDB's own statement log (general_log, written to a table) shows every SELECT the
// app sent while a member reads, lists and expands: the hidden column `salary` is in none of them,
// while an admin's reads name it. The answers are checked too: no `salary` anywhere.

import { createResource, crudkit, type DatabaseOptions, references, withId } from "crudkit-api";
import type { Connection } from "mysql2/promise";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call } from "./helpers.ts";

const isAdmin = ({ user }: { user: { roles?: readonly string[] } | null }) =>
  user?.roles?.includes("admin") === true;

const team = createResource({
  name: "team",
  schema: withId({ title: z.string().max(100) }),
  access: { create: true, read: true, list: true },
});
const employee = createResource({
  name: "employee",
  schema: withId({
    fullName: z.string().max(100),
    salary: z.number().optional(),
    teamId: references(team, { reverse: "members" }),
  }),
  access: { create: true, read: true, list: true, fields: { salary: { read: isAdmin } } },
});
const badge = createResource({
  name: "badge",
  schema: withId({ code: z.string().max(20), employeeId: references(employee) }),
  access: { create: true, read: true, list: true },
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [team, employee, badge],
    log: () => {},
    identify: (request) => {
      const id = request.headers.get("x-user");
      return id ? { id, roles: id === "root" ? ["admin"] : [] } : null;
    },
  });

forEachDialect(
  (dialect) => {
    const app = appPerDialect(dialect, makeApp);
    let log: Connection;
    beforeAll(async () => {
      const mysql = await import("mysql2/promise");
      log = await mysql.createConnection(process.env.CRUDKIT_TEST_MYSQL_URL!);
      await log.query("set global log_output = 'TABLE'");
    });
    afterAll(async () => {
      await log.query("set global general_log = 0");
      await log.end();
    });

    /** The SELECTs on `employee` the app sent while `work` ran, from the server's general log. */
    async function selectsDuring(work: () => Promise<void>): Promise<string[]> {
      await log.query("truncate table mysql.general_log");
      await log.query("set global general_log = 1");
      try {
        await work();
      } finally {
        await log.query("set global general_log = 0");
      }
      const [rows] = await log.query(
        "select convert(argument using utf8mb4) as statement from mysql.general_log where command_type in ('Query', 'Execute')",
      );
      return (rows as { statement: string }[])
        .map((r) => r.statement)
        .filter((s) => /^\s*select\b/i.test(s) && /`employee`/.test(s));
    }

    it("a member's reads, lists and expansions never select the hidden column; an admin's do", async () => {
      const red = await app.api.createTeam({ body: { title: "Red" }, overrideAccess: true });
      const ann = await app.api.createEmployee({
        body: { fullName: "Ann", salary: 5000, teamId: red.id },
        overrideAccess: true,
      });
      await app.api.createBadge({ body: { code: "B1", employeeId: ann.id }, overrideAccess: true });
      const member = { "x-user": "bob" };
      const answers: string[] = [];
      const statements = await selectsDuring(async () => {
        for (const path of [
          `/api/employee/${ann.id}`,
          "/api/employees",
          "/api/employees?sortBy=fullName&limit=1",
          "/api/teams?expand=members",
          `/api/team/${red.id}?expand=members`,
          "/api/badges?expand=employee",
        ]) {
          const res = await call(app, "GET", path, { headers: member });
          expect(res.status, path).toBe(200);
          answers.push(res.text);
        }
      });
      expect(statements.length).toBeGreaterThanOrEqual(6);
      for (const statement of statements) expect(statement).not.toMatch(/salary|`employee`\.\*|select \*/i);
      for (const text of answers) expect(text).not.toContain("salary");

      const admin = { "x-user": "root" };
      const adminStatements = await selectsDuring(async () => {
        const read = await call(app, "GET", `/api/employee/${ann.id}`, { headers: admin });
        expect(read.body.salary).toBe(5000);
        const list = await call(app, "GET", "/api/teams?expand=members", { headers: admin });
        expect(list.body.items[0].members[0].salary).toBe(5000);
      });
      expect(adminStatements.length).toBeGreaterThanOrEqual(2);
      for (const statement of adminStatements) expect(statement).toMatch(/select \*|salary|`ranked`/i);
    });
  },
  ["mysql"],
);
