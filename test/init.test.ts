// `crudkit init` (issue 36 §1) as a user meets it: the package packed once (npm pack of a copy of
// the repository, so this file never rebuilds the dist/ other test files may be reading), installed
// in an empty directory, its CLI run with plain node. The generated projects install from the
// registry (warm cache), serve with `npm start`, and pass their own `npm test`, on SQLite and on a
// fresh PostgreSQL database. Then the refusals: a non-empty directory, overwrites, bad flags,
// hostile names; and the pieces (names, package managers, the questions) on their own.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative, sep } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installCommand, packageManagerFrom, runPrefix, shellQuote } from "../src/cli/init/install.ts";
import { targetDirectory } from "../src/cli/init/options.ts";
import { packageNameFrom } from "../src/cli/init/package-name.ts";
import { askChoices } from "../src/cli/init/prompts.ts";
import { VERSIONS } from "../src/cli/init/templates/spec.ts";
import { CliError } from "../src/cli/load-config.ts";
import { DIALECTS } from "./dialects.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const work = mkdtempSync(join(tmpdir(), "crudkit-init-"));
let tarball = "";
let bin = "";
const children: ChildProcess[] = [];

/**
 * The environment of a user's shell: npm's variables from the run that started vitest are dropped
 * (npm would read them as its own config), the cache and node-gyp's headers kept.
 */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const keep = new Set([
    "npm_config_cache",
    "npm_config_nodedir",
    "npm_config_registry",
    "npm_config_userconfig",
  ]);
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!/^(npm_|VITEST|NODE_OPTIONS$|NODE_ENV$|TEST$)/.test(key) || keep.has(key)) env[key] = value;
  // better-sqlite3 compiles from source here: against the installed Node headers (as CI sets it).
  if (!env.npm_config_nodedir && existsSync("/usr/include/node/node.h")) env.npm_config_nodedir = "/usr";
  return {
    ...env,
    npm_config_user_agent: `npm/11.19.0 node/${process.version} linux x64 workspaces/false`,
    npm_config_prefer_offline: "true",
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
    ...extra,
  };
}

function sh(command: string, args: string[], cwd: string, env = userEnv(), timeout = 180_000) {
  const result = spawnSync(command, args, { cwd, env, encoding: "utf8", timeout });
  return { code: result.status, stdout: result.stdout ?? "", stderr: result.stderr ?? "" };
}

/** `node <package>/bin/crudkit.mjs …`, the packed package's own command. */
const crudkit = (cwd: string, args: string[], env = userEnv()) =>
  sh(process.execPath, [bin, ...args], cwd, env);

function emptyDir(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir);
  return dir;
}

/** Every file under dir, relative, with its content: to show nothing changed. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      files[relative(dir, path)] = readFileSync(path, "utf8");
    }
  return files;
}

beforeAll(() => {
  // A copy of the repository (node_modules linked) packs exactly what `npm pack` here would,
  // while the dist/ the CLI and admin tests read stays as it is.
  const stage = join(work, "stage");
  const skipped = new Set(["node_modules", ".git", "dist", "test-artifacts", "test", "docs", "bench"]);
  cpSync(root, stage, {
    recursive: true,
    filter: (source) => !skipped.has(relative(root, source).split(sep)[0]!),
  });
  symlinkSync(join(root, "node_modules"), join(stage, "node_modules"));
  const packed = sh("npm", ["pack", "--silent", "--pack-destination", work], stage);
  expect(packed.code, packed.stderr).toBe(0);
  tarball = join(work, packed.stdout.trim().split("\n").at(-1)!);
  // The CLI needs the package's dependencies, not SQLite's compiled driver.
  const runner = emptyDir("runner");
  writeFileSync(join(runner, "package.json"), '{ "private": true }\n');
  const installed = sh("npm", ["install", "--ignore-scripts", tarball], runner);
  expect(installed.code, installed.stderr).toBe(0);
  bin = join(runner, "node_modules/crudkit-api/bin/crudkit.mjs");
}, 240_000);

afterAll(() => {
  for (const child of children) stopGroup(child, "SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

function stopGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, signal);
  } catch {}
}

/** `npm start` in its own process group (npm, tsx, node), until it prints where it listens. */
async function start(dir: string, env: Record<string, string>) {
  const child = spawn("npm", ["start"], {
    cwd: dir,
    env: userEnv({ PORT: "0", HOST: "127.0.0.1", ...env }),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`npm start printed no address in 30 s:\n${output}`)),
      30_000,
    );
    const read = (chunk: Buffer) => {
      output += chunk;
      const found = /listening on (http:\/\/127\.0\.0\.1:\d+\/api)/.exec(output);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]!);
      }
    };
    child.stdout!.on("data", read);
    child.stderr!.on("data", read);
    child.on("exit", (code) => reject(new Error(`npm start exited (${code}):\n${output}`)));
  });
  const stop = async () => {
    const exited = new Promise((resolve) => child.on("exit", resolve));
    stopGroup(child, "SIGTERM");
    await exited;
  };
  return { url, stop, output: () => output };
}

async function post(url: string, body: unknown, key?: string) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key && { "x-api-key": key }) },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

async function get(url: string, key?: string) {
  const response = await fetch(url, { headers: key ? { "x-api-key": key } : {} });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));
/** The first project's install, reused by the others: SQLite's driver compiles in about 70 s. */
let installedApp: string | undefined;

/** `npm install` in a project that starts from the first one's tree; npm adds the driver. */
function installLikeTheFirst(app: string): void {
  if (installedApp) {
    cpSync(join(installedApp, "node_modules"), join(app, "node_modules"), {
      recursive: true,
      verbatimSymlinks: true,
    });
    cpSync(join(installedApp, "package-lock.json"), join(app, "package-lock.json"));
  }
  const installed = sh("npm", ["install"], app);
  expect(installed.code, installed.stderr).toBe(0);
}

describe("crudkit init, from the packed tarball, run with plain node", () => {
  it("sqlite, --yes: writes the project and installs it with npm; npm start serves, a create with the API key answers 201; npm test passes", async () => {
    const cwd = emptyDir("sqlite");
    const init = crudkit(cwd, ["init", "app", "--yes", "--from", tarball]);
    expect(init.code, init.stderr + init.stdout).toBe(0);
    const app = join(cwd, "app");
    const pkg = readJson(join(app, "package.json"));
    expect(pkg).toMatchObject({ name: "app", type: "module", private: true });
    expect(Object.keys(pkg.scripts).sort()).toEqual(["dev", "generate", "migrate", "start", "test"]);
    expect(pkg.scripts.dev).toBe("tsx watch src/server.ts");
    const vendored = `vendor/${basename(tarball)}`;
    expect(pkg.dependencies).toEqual({
      "crudkit-api": `file:${vendored}`,
      tsx: VERSIONS.tsx,
      zod: VERSIONS.zod,
    });
    expect(readFileSync(join(app, vendored))).toEqual(readFileSync(tarball));
    expect(readJson(join(app, "tsconfig.json")).compilerOptions.strict).toBe(true);
    for (const file of ["src/resources.ts", "src/server.ts", "crudkit.config.ts", ".gitignore", "README.md"])
      expect(existsSync(join(app, file)), file).toBe(true);
    expect(readFileSync(join(app, "src/resources.ts"), "utf8")).toContain('ownedBy("ownerId"');
    expect(readFileSync(join(app, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(14);
    expect(existsSync(join(app, "node_modules/crudkit-api/dist/index.mjs"))).toBe(true);
    expect(init.stdout).toContain("API_KEY=secret npm run dev");

    const server = await start(app, { API_KEY: "init-test-key" });
    try {
      const created = await post(`${server.url}/task`, { title: "Hello" }, "init-test-key");
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ title: "Hello", ownerId: "me", done: false });
      expect((await get(`${server.url}/tasks`)).status).toBe(403);
      expect((await get(`${server.url}/tasks`, "wrong-key")).status).toBe(401);
      expect((await get(`${server.url}/tasks`, "init-test-key")).body.items).toHaveLength(1);
    } finally {
      await server.stop();
    }
    expect(existsSync(join(app, "data/app.db"))).toBe(true);

    const tested = sh("npm", ["test"], app);
    expect(tested.code, tested.stdout + tested.stderr).toBe(0);
    expect(tested.stdout).toMatch(/# pass 3\n# fail 0/);
    // The CLI loads crudkit.config.ts: the database the server migrated matches the resources.
    const generated = sh("npm", ["run", "generate"], app);
    expect(generated.code, generated.stderr).toBe(0);
    expect(generated.stdout).toContain("nothing to generate");
    installedApp = app;
  }, 300_000);

  const postgres = DIALECTS.find((d) => d.name === "postgres")!;
  (postgres.missing && !process.env.CI ? it.skip : it)(
    "postgres with every plugin, --no-install: prints the command and installs nothing; then npm install, npm start and npm test against a fresh PostgreSQL database",
    async () => {
      const cwd = emptyDir("postgres");
      const init = crudkit(cwd, [
        "init",
        "pg app",
        "--database",
        "postgres",
        "--plugins",
        "audit,cache,rate-limit,idempotency",
        "--no-install",
        "--from",
        tarball,
      ]);
      expect(init.code, init.stderr).toBe(0);
      expect(init.stdout).toContain("  cd 'pg app'\n  npm install\n");
      const app = join(cwd, "pg app");
      expect(existsSync(join(app, "node_modules"))).toBe(false);
      expect(existsSync(join(app, "package-lock.json"))).toBe(false);
      const pkg = readJson(join(app, "package.json"));
      expect(pkg.name).toBe("pg-app");
      expect(pkg.dependencies.pg).toBe(VERSIONS.pg);
      expect(readFileSync(join(app, "README.md"), "utf8")).toContain("`DATABASE_URL` (required");
      expect(readFileSync(join(app, "src/app.ts"), "utf8")).toContain(
        'import { audit, cache, idempotency, rateLimit } from "crudkit-api/plugins";',
      );

      installLikeTheFirst(app);
      expect(existsSync(join(app, "node_modules/pg/package.json"))).toBe(true);

      const { url: databaseUrl } = await postgres.fresh();
      const server = await start(app, {
        DATABASE_URL: databaseUrl,
        API_KEY: "user-key",
        ADMIN_API_KEY: "admin-key",
      });
      try {
        const created = await post(`${server.url}/task`, { title: "On PostgreSQL" }, "user-key");
        expect(created.status).toBe(201);
        expect(created.headers.get("ratelimit-limit")).toBe("100");
        const path = `${server.url}/task/${created.body.id}`;
        expect((await get(path, "user-key")).headers.get("x-cache")).toBe("MISS");
        expect((await get(path, "user-key")).headers.get("x-cache")).toBe("HIT");
        const logs = await get(`${server.url}/audit/logs`, "admin-key");
        expect(logs.status).toBe(200);
        expect(logs.body.items).toMatchObject([{ resource: "task", operation: "create", userId: "me" }]);
        expect((await get(`${server.url}/audit/logs`, "user-key")).status).toBe(403);
      } finally {
        await server.stop();
      }
      const tested = sh("npm", ["test"], app, userEnv({ TEST_DATABASE_URL: databaseUrl }));
      expect(tested.code, tested.stdout + tested.stderr).toBe(0);
      expect(tested.stdout).toMatch(/# pass 3\n# fail 0/);
      const migrated = sh("npm", ["run", "migrate"], app, userEnv({ DATABASE_URL: databaseUrl }));
      expect(migrated.code, migrated.stdout + migrated.stderr).toBe(0);
      // Without DATABASE_URL the server says what to set, and exits.
      const missing = sh("npm", ["start"], app, userEnv({ PORT: "0" }), 30_000);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("Set DATABASE_URL to your PostgreSQL database");
    },
    240_000,
  );

  const mysql = DIALECTS.find((d) => d.name === "mysql")!;
  (mysql.missing && !process.env.CI ? it.skip : it)(
    "mysql: the project type-checks and its npm test passes against a fresh MariaDB database",
    async () => {
      const cwd = emptyDir("mysql");
      const init = crudkit(cwd, [
        "init",
        "app",
        "--yes",
        "--database",
        "mysql",
        "--no-install",
        "--from",
        tarball,
      ]);
      expect(init.code, init.stderr).toBe(0);
      const app = join(cwd, "app");
      expect(readJson(join(app, "package.json")).dependencies.mysql2).toBe(VERSIONS.mysql2);
      installLikeTheFirst(app);
      const { url: databaseUrl } = await mysql.fresh();
      const tested = sh("npm", ["test"], app, userEnv({ TEST_DATABASE_URL: databaseUrl }));
      expect(tested.code, tested.stdout + tested.stderr).toBe(0);
      expect(tested.stdout).toMatch(/# pass 3\n# fail 0/);
    },
    180_000,
  );

  it("refuses a directory that is not empty without --force: exit 1, nothing written or changed", () => {
    const cwd = emptyDir("refuse");
    writeFileSync(join(cwd, "notes.txt"), "mine\n");
    const before = snapshot(cwd);
    const result = crudkit(cwd, ["init", "--yes", "--no-install", "--from", tarball]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "crudkit: . is not empty (notes.txt): nothing was written. Choose a new or empty directory, or pass --force to write into it (a file init would overwrite is first renamed to <name>.bak).\n",
    );
    expect(snapshot(cwd)).toEqual(before);
    // ".." from an empty directory is its parent, which is not empty either.
    const up = crudkit(emptyDir("empty-child"), ["init", "..", "--yes", "--no-install"]);
    expect(up.code).toBe(1);
    expect(up.stderr).toContain("crudkit: .. is not empty");
  });

  it("--force never overwrites: each file in the way is kept as <name>.bak (then .bak.1), and listed", () => {
    const cwd = emptyDir("force");
    writeFileSync(join(cwd, "package.json"), '{ "name": "mine" }\n');
    writeFileSync(join(cwd, "notes.txt"), "mine\n");
    const first = crudkit(cwd, ["init", ".", "--yes", "--no-install", "--force"]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(
      "Kept what was in the way under another name:\n  package.json → package.json.bak\n",
    );
    expect(readFileSync(join(cwd, "package.json.bak"), "utf8")).toBe('{ "name": "mine" }\n');
    expect(readJson(join(cwd, "package.json")).name).toBe("force");
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("mine\n");
    // Without --from the dependency is this version, from npm.
    expect(readJson(join(cwd, "package.json")).dependencies["crudkit-api"]).toBe(`^${manifest.version}`);

    writeFileSync(join(cwd, "src/server.ts"), "// edited\n");
    const second = crudkit(cwd, ["init", "--yes", "--no-install", "--force"]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("  package.json → package.json.bak.1\n");
    expect(second.stdout).toContain("  src/server.ts → src/server.ts.bak\n");
    expect(readFileSync(join(cwd, "package.json.bak"), "utf8")).toBe('{ "name": "mine" }\n');
    expect(readFileSync(join(cwd, "src/server.ts.bak"), "utf8")).toBe("// edited\n");
  });

  it("a value init does not take is exit 2 with a sentence naming the choices, and nothing is written", () => {
    const cwd = emptyDir("bad-flags");
    const database = crudkit(cwd, ["init", "app", "--yes", "--database", "oracle"]);
    expect(database.code).toBe(2);
    expect(database.stderr).toBe(
      'crudkit: --database must be one of sqlite, postgres, mysql, not "oracle".\n',
    );
    const plugins = crudkit(cwd, ["init", "app", "--yes", "--plugins", "audit,auth,cache"]);
    expect(plugins.code).toBe(2);
    expect(plugins.stderr).toBe(
      'crudkit: --plugins: unknown plugin "auth": choose from audit, cache, rate-limit, idempotency (comma-separated), or none.\n',
    );
    const from = crudkit(cwd, ["init", "app", "--yes", "--from", "nowhere.tgz"]);
    expect(from.code).toBe(2);
    expect(from.stderr).toContain("--from nowhere.tgz: no such file or directory.");
    const notCrudkit = crudkit(cwd, ["init", "app", "--yes", "--from", join(root, "test")]);
    expect(notCrudkit.code).toBe(2);
    const notTarball = crudkit(cwd, ["init", "app", "--yes", "--from", join(root, "package.json")]);
    expect(notTarball.code).toBe(2);
    expect(notTarball.stderr).toContain("not a gzipped tarball");
    // A directory whose package.json is not JSON is no checkout either: a sentence, not a stack.
    const broken = join(tmpdir(), `crudkit-init-broken-${process.pid}`);
    mkdirSync(broken, { recursive: true });
    writeFileSync(join(broken, "package.json"), '{ "name": "crudkit-api", ');
    const notJson = crudkit(cwd, ["init", "app", "--yes", "--from", broken]);
    rmSync(broken, { recursive: true, force: true });
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain("is not a crudkit-api checkout");
    expect(notJson.stderr).not.toMatch(/SyntaxError|\n\s+at /);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("--from a checkout packs it (npm pack, its prepack included) into vendor/; a failed pack writes nothing", () => {
    const cwd = emptyDir("from-checkout");
    const checkout = join(cwd, "checkout");
    mkdirSync(checkout);
    const fake = { name: "crudkit-api", version: "0.0.1-test", files: ["index.js", "built.txt"] };
    writeFileSync(
      join(checkout, "package.json"),
      JSON.stringify({
        ...fake,
        scripts: { prepack: "node -e \"require('fs').writeFileSync('built.txt', 'yes')\"" },
      }),
    );
    writeFileSync(join(checkout, "index.js"), "export {};\n");
    const packed = crudkit(cwd, ["init", "app", "--yes", "--no-install", "--from", "checkout"]);
    expect(packed.code, packed.stderr).toBe(0);
    const pkg = readJson(join(cwd, "app/package.json"));
    expect(pkg.dependencies["crudkit-api"]).toBe("file:vendor/crudkit-api-0.0.1-test.tgz");
    const listed = sh("tar", ["-tzf", join(cwd, "app/vendor/crudkit-api-0.0.1-test.tgz")], cwd);
    expect(listed.stdout.split("\n").sort()).toEqual([
      "",
      "package/built.txt",
      "package/index.js",
      "package/package.json",
    ]);

    writeFileSync(
      join(checkout, "package.json"),
      JSON.stringify({ ...fake, scripts: { prepack: "exit 3" } }),
    );
    const failed = crudkit(cwd, ["init", "app2", "--yes", "--no-install", "--from", "checkout"]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("crudkit: npm pack failed in");
    expect(existsSync(join(cwd, "app2"))).toBe(false);
  });

  it("hostile directory names: spaces and accents make a valid npm name; a 300-byte name is exit 2", () => {
    const cwd = emptyDir("names");
    const spaced = crudkit(cwd, ["init", "My Café App!", "--yes", "--no-install"]);
    expect(spaced.code, spaced.stderr).toBe(0);
    expect(readJson(join(cwd, "My Café App!/package.json")).name).toBe("my-cafe-app");
    expect(spaced.stdout).toContain("  cd 'My Café App!'\n");
    const dotted = crudkit(cwd, ["init", "a/../.hidden", "--yes", "--no-install"]);
    expect(dotted.code, dotted.stderr).toBe(0);
    expect(readJson(join(cwd, ".hidden/package.json")).name).toBe("hidden");
    const long = crudkit(cwd, ["init", "x".repeat(300), "--yes", "--no-install"]);
    expect(long.code).toBe(2);
    expect(long.stderr).toContain("is 300 bytes long: file systems take at most 255");
    expect(readdirSync(cwd).sort()).toEqual([".hidden", "My Café App!"]);
  });

  it("without a terminal and without --yes it asks nothing: the defaults, SQLite and no plugins", () => {
    const cwd = emptyDir("no-tty");
    const result = spawnSync(process.execPath, [bin, "init", "app", "--no-install"], {
      cwd,
      env: userEnv(),
      encoding: "utf8",
      input: "postgres\n",
      timeout: 30_000,
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).not.toContain("Database:");
    expect(result.stdout).toContain("SQLite, plugins: none");
    expect(readJson(join(cwd, "app/package.json")).dependencies.pg).toBeUndefined();
  });
});

describe("init's pieces", () => {
  it("the package name is a valid npm name made from the directory's", () => {
    expect(packageNameFrom("My App")).toBe("my-app");
    expect(packageNameFrom("Café Ünïcode")).toBe("cafe-unicode");
    expect(packageNameFrom("..")).toBe("crudkit-app");
    expect(packageNameFrom("_private.")).toBe("private");
    expect(packageNameFrom("日本")).toBe("crudkit-app");
    expect(packageNameFrom("node_modules")).toBe("crudkit-app");
    expect(packageNameFrom("http")).toBe("http-app");
    expect(packageNameFrom("a".repeat(300))).toHaveLength(214);
    expect(packageNameFrom("x~y(z)'*!")).toBe("x-y-z");
  });

  it("a NUL byte in the directory (argv cannot carry one) is exit 2", () => {
    const refused = (() => {
      try {
        targetDirectory("app\0evil", work);
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(CliError);
    expect(refused).toMatchObject({ exitCode: 2, message: "The directory name contains a NUL byte." });
  });

  it("the package manager is the one that ran init", () => {
    expect(packageManagerFrom("pnpm/9.1.0 npm/? node/v20.20.2 linux x64")).toBe("pnpm");
    expect(packageManagerFrom("yarn/1.22.22 npm/? node/v20.20.2 linux x64")).toBe("yarn");
    expect(packageManagerFrom("bun/1.1.0 npm/? node/v20.20.2 linux x64")).toBe("bun");
    expect(packageManagerFrom("npm/11.19.0 node/v20.20.2 linux x64 workspaces/false")).toBe("npm");
    expect(packageManagerFrom(undefined)).toBe("npm");
    expect(["npm", "pnpm", "yarn", "bun"].map((m) => installCommand(packageManagerFrom(`${m}/1`)))).toEqual([
      "npm install",
      "pnpm install",
      "yarn",
      "bun install",
    ]);
    expect(runPrefix("pnpm")).toBe("pnpm");
    expect(runPrefix("bun")).toBe("bun run");
    expect(shellQuote("it's here")).toBe("'it'\\''s here'");
  });

  async function answer(input: string, given = {}) {
    const streams = { input: new PassThrough(), output: new PassThrough() };
    let shown = "";
    streams.output.on("data", (chunk) => {
      shown += chunk;
    });
    streams.input.end(input);
    const choices = await askChoices(streams, given, { database: "sqlite", plugins: [] }).catch((e) => e);
    return { choices, shown };
  }

  it("the questions take numbers or names, ask again after a wrong answer, and keep the defaults on Enter", async () => {
    const asked = await answer("7\n2\nfoo\n1, cache\n");
    expect(asked.choices).toEqual({ database: "postgres", plugins: ["audit", "cache"] });
    expect(asked.shown).toContain('"7" is not one of the choices.');
    expect(asked.shown).toContain('"foo" is not one of the choices.');
    expect((await answer("\n\n")).choices).toEqual({ database: "sqlite", plugins: [] });
    expect((await answer("MySQL\nrate-limit idempotency\n")).choices).toEqual({
      database: "mysql",
      plugins: ["rate-limit", "idempotency"],
    });
  });

  it("a choice given as a flag is not asked; closing the input cancels", async () => {
    const flagged = await answer("cache\n", { database: "postgres" });
    expect(flagged.choices).toEqual({ database: "postgres", plugins: ["cache"] });
    expect(flagged.shown).not.toContain("Database:");
    const closed = await answer("");
    expect(closed.choices).toBeInstanceOf(CliError);
    expect(closed.choices.message).toBe("Cancelled: nothing was written.");
  });

  it("the versions a project pins are the ones this package is built and tested with", () => {
    for (const [name, range] of Object.entries(VERSIONS))
      expect(manifest.devDependencies[name], name).toBe(range);
  });
});
