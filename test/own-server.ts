// A PostgreSQL or MariaDB server of a test's own, prepared (cluster, user, database) and then
// stopped, so the test can start the real server when it chooses: after the app, say.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./helpers.ts";

const PG_BIN = "/usr/lib/postgresql/15/bin";

export interface OwnServer {
  /** The URL the app is given: user and `password` of the test's own. */
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /**
   * Runs `statement` as the server's administrator through its command-line client, blocking the
   * event loop meanwhile: what the server does to the app's connections is not read before it ends.
   */
  adminSync(statement: string): string;
  /** PostgreSQL: the shell command that starts a smart shutdown and returns at once. */
  smartStop?: () => string;
  /** Kills the server and every process of it with SIGKILL, as a crash would. */
  kill(): Promise<void>;
  /** Stops the server if it runs and removes its files. */
  remove(): Promise<void>;
}

export const ownServersPresent = existsSync(`${PG_BIN}/initdb`) && existsSync("/usr/sbin/mariadbd");

function ownedDir(user: string): string {
  const dir = mkdtempSync(join(tmpdir(), `crudkit-own-${user}-`));
  chownSync(dir, uidOf(user), uidOf(user));
  return dir;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function uidOf(user: string): number {
  return Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
}

/** A PostgreSQL cluster with trust auth (any password is accepted), stopped until `start()`. */
export async function ownPostgres(password: string): Promise<OwnServer> {
  const dir = ownedDir("postgres");
  const port = await freePort();
  const asPostgres = (tool: string, ...args: string[]) =>
    execFileSync("runuser", ["-u", "postgres", "--", `${PG_BIN}/${tool}`, ...args], { stdio: "pipe" });
  asPostgres("initdb", "-D", join(dir, "data"), "-U", "postgres", "--auth=trust", "--no-sync");
  let running = false;
  const server: OwnServer = {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    async start() {
      asPostgres(
        "pg_ctl",
        "-D",
        join(dir, "data"),
        "-l",
        join(dir, "log"),
        "-w",
        "-o",
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
        "start",
      );
      running = true;
    },
    async stop() {
      if (running) asPostgres("pg_ctl", "-D", join(dir, "data"), "-m", "fast", "-w", "stop");
      running = false;
    },
    smartStop: () => `${PG_BIN}/pg_ctl -D ${join(dir, "data")} -m smart -W stop`,
    adminSync(statement) {
      return execFileSync(
        "runuser",
        ["-u", "postgres", "--", "psql", "-h", dir, "-p", String(port), "-U", "postgres", "-Atc", statement],
        { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
      );
    },
    async kill() {
      if (!running) return;
      running = false;
      const postmaster = Number(readFileSync(join(dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
      // The backends first, so none outlives the postmaster holding the shared memory.
      try {
        execFileSync("pkill", ["-KILL", "-P", String(postmaster)], { stdio: "pipe" });
      } catch {}
      process.kill(postmaster, "SIGKILL");
      for (let i = 0; i < 100 && alive(postmaster); i++) await new Promise((r) => setTimeout(r, 20));
    },
    async remove() {
      await server.stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}

/** A MariaDB server with a TCP user whose password is `password`, stopped until `start()`. */
export async function ownMariadb(password: string): Promise<OwnServer> {
  const dir = ownedDir("mysql");
  const port = await freePort();
  const socket = join(dir, "sock");
  execFileSync(
    "mariadb-install-db",
    [
      "--no-defaults",
      "--user=mysql",
      `--datadir=${join(dir, "data")}`,
      "--auth-root-authentication-method=socket",
      "--skip-test-db",
    ],
    { stdio: "pipe" },
  );
  let child: ChildProcess | undefined;
  const server: OwnServer = {
    url: `mysql://app:${encodeURIComponent(password)}@127.0.0.1:${port}/app`,
    async start() {
      child = spawn(
        "mariadbd",
        [
          "--no-defaults",
          "--user=mysql",
          `--datadir=${join(dir, "data")}`,
          `--socket=${socket}`,
          `--port=${port}`,
          "--bind-address=127.0.0.1",
          "--skip-name-resolve",
        ],
        { stdio: "ignore" },
      );
      for (let i = 0; i < 150; i++) {
        try {
          execFileSync("mariadb-admin", [`--socket=${socket}`, "ping"], { stdio: "pipe" });
          return;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      throw new Error("MariaDB did not start");
    },
    async stop() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once("exit", resolve));
      running.kill("SIGTERM");
      await exited;
    },
    adminSync(statement) {
      return execFileSync("mariadb", [`--socket=${socket}`, "-N", "-e", statement], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
    },
    async kill() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once("exit", resolve));
      running.kill("SIGKILL");
      await exited;
    },
    async remove() {
      await server.stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
  // The user and database exist before the app ever connects; then the server goes down again.
  await server.start();
  execFileSync(
    "mariadb",
    [
      `--socket=${socket}`,
      "-e",
      `CREATE DATABASE app; CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY '${password}'; GRANT ALL ON app.* TO 'app'@'127.0.0.1';`,
    ],
    { stdio: "pipe" },
  );
  await server.stop();
  return server;
}
