// better-sqlite3 is loaded when a SQLite database is first used (issue 43): where its native
// addon is missing, an app on PostgreSQL or MariaDB starts and serves, and an app on SQLite says
// which package to install instead of failing at import. Each case runs in a Node process of its
// own whose module resolution cannot find better-sqlite3.

import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { DIALECTS } from "./dialects.ts";
import { tempDatabaseUrl } from "./helpers.ts";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

function runWithout(
  provider: string,
  url: string,
  directUrl = "",
): { created?: string; error?: string; logged: string[] } {
  const out = execFileSync(
    process.execPath,
    [
      "--import",
      "tsx",
      "--import",
      here("./child/without-better-sqlite3.mjs"),
      here("./child/driverless-app.ts"),
      provider,
      url,
      directUrl,
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 30_000 },
  );
  return JSON.parse(out.trim().split("\n").at(-1)!);
}

for (const dialect of DIALECTS.filter((d) => d.name !== "sqlite")) {
  (dialect.missing && !process.env.CI ? it.skip : it)(
    `${dialect.label ?? dialect.name}: starts and serves without better-sqlite3`,
    async () => {
      const { url, directUrl } = (await dialect.fresh()) as { url: string; directUrl?: string };
      expect(runWithout(dialect.name, url, directUrl)).toEqual({ created: "driverless", logged: [] });
    },
    40_000,
  );
}

it("sqlite: without better-sqlite3, says which package to install", () => {
  const outcome = runWithout("sqlite", tempDatabaseUrl());
  expect(outcome.created).toBeUndefined();
  expect(`${outcome.error} ${outcome.logged.join(" ")}`).toContain("npm install better-sqlite3");
}, 40_000);
