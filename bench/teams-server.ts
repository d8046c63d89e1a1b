// The API the teams bench (bench/teams.ts) measures: organizations, memberships, projects and two
// tables of tasks with the same columns. `task` is scoped by memberOf through its project
// (`project.orgId`, a semi-join per statement); `taskPlain` by its own copied `orgId` column and a
// plain rule on the organizations the caller's header names (no lookup at all: the baseline).
//   DATABASE_URL (postgres://… or file:…), NOTES_RULE: `plain` (default), internalNotes hidden
//   from callers without the global "admin" role; `record`, shown where the caller is an owner or
//   admin of the task's organization (a record-aware field rule, a memberOf).
// Callers are named by headers, checked by nobody: x-user (her id), x-roles and x-orgs (lists
// separated by commas). It prints "listening <url>" once it serves, on a free loopback port.

import {
  createResource,
  crudkit,
  databaseFromUrl,
  memberOf,
  references,
  type User,
  withId,
} from "crudkit-api";
import { serve } from "crudkit-api/node";
import { z } from "zod";

const list = (value: string | null) => (value ? value.split(",") : []);
const isAdmin = ({ user }: { user: { roles?: readonly string[] } | null }) =>
  user?.roles?.includes("admin") === true;

const organization = createResource({
  name: "organization",
  schema: withId({ name: z.string().max(100) }),
  access: { ...memberOf("membership", { user: "userId", scope: "orgId", path: "id" }) },
});
const membership = createResource({
  name: "membership",
  schema: withId({
    orgId: references(organization, { onDelete: "cascade" }),
    userId: z.string().max(100),
    role: z.enum(["owner", "admin", "member"]),
  }),
  unique: [["orgId", "userId"]],
  access: { read: memberOf("membership", { user: "userId", scope: "orgId" }) },
});
const project = createResource({
  name: "project",
  schema: withId({ title: z.string().max(100), orgId: references(organization, { onDelete: "cascade" }) }),
  access: { ...memberOf(membership, { user: "userId", scope: "orgId" }) },
});

/** The columns of both task tables: the copied orgId is indexed for the order a list reads in. */
const taskSchema = withId({
  title: z.string().max(200),
  projectId: references(project, { onDelete: "cascade" }),
  orgId: z.string().max(100),
  internalNotes: z.string().max(2000).optional(),
});
const taskIndexes = [["orgId", "createdAt", "id"]] as const;

const inTaskOrg = memberOf(membership, { user: "userId", scope: "orgId", path: "project.orgId" });
// A field rule that returns a row filter (a record-aware field rule, issue 45); the bench checks
// it is honoured before measuring it.
const notesOfManagers = memberOf(membership, {
  user: "userId",
  scope: "orgId",
  path: "project.orgId",
  roles: ["owner", "admin"],
});
const notesRule = process.env.NOTES_RULE === "record" ? notesOfManagers : isAdmin;

const task = createResource({
  name: "task",
  schema: taskSchema,
  indexes: [...taskIndexes],
  access: { ...inTaskOrg, fields: { internalNotes: { read: notesRule } } },
});
const inHeaderOrgs = ({ user }: { user: User | null }) =>
  user ? { orgId: { in: user.orgIds as string[] } } : false;
const taskPlain = createResource({
  name: "taskPlain",
  schema: taskSchema,
  indexes: [...taskIndexes],
  access: { read: inHeaderOrgs, list: inHeaderOrgs, fields: { internalNotes: { read: isAdmin } } },
});

const app = crudkit({
  database: databaseFromUrl(process.env.DATABASE_URL ?? "file:./data/teams.db"),
  autoMigrate: true,
  resources: [organization, membership, project, task, taskPlain],
  identify: (request): User | null => {
    const id = request.headers.get("x-user");
    if (!id) return null;
    return { id, roles: list(request.headers.get("x-roles")), orgIds: list(request.headers.get("x-orgs")) };
  },
});

try {
  const running = await serve(app, { port: 0, hostname: "127.0.0.1", waitForDatabase: false });
  console.log(`listening ${running.url}`);
  const stop = async () => {
    await running.close();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
