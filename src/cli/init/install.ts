// Installs the project's dependencies with the package manager that ran init (npm, pnpm, yarn
// or bun, read from npm_config_user_agent), or says the command to run.

import { spawn } from "node:child_process";

export type PackageManager = "npm" | "pnpm" | "yarn" | "bun";

/** `pnpm/9.1.0 npm/? node/v20.20.2 linux x64` → pnpm; npm when unset or unknown. */
export function packageManagerFrom(userAgent: string | undefined): PackageManager {
  const name = userAgent?.trim().split(/[\s/]/)[0];
  return name === "pnpm" || name === "yarn" || name === "bun" ? name : "npm";
}

export function installArgs(manager: PackageManager): string[] {
  return manager === "yarn" ? [] : ["install"];
}

/** How a script is run: `npm run dev`, `pnpm dev`, `yarn dev`, `bun run dev`. */
export function runPrefix(manager: PackageManager): string {
  return manager === "npm" || manager === "bun" ? `${manager} run` : manager;
}

export function installCommand(manager: PackageManager): string {
  return [manager, ...installArgs(manager)].join(" ");
}

/** A path as a POSIX shell reads it back: quoted when it holds anything but safe characters. */
export function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Runs the install in `dir`, its output shown as it comes; resolves to whether it succeeded. */
export function install(manager: PackageManager, dir: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((done) => {
    const child = spawn(manager, installArgs(manager), {
      cwd: dir,
      env: childEnv(env),
      stdio: ["ignore", "inherit", "inherit"],
      // npm, pnpm and yarn are .cmd scripts on Windows, which only a shell starts.
      shell: process.platform === "win32",
    });
    child.on("error", () => done(false));
    child.on("exit", (code) => done(code === 0));
  });
}

/** The environment for a command init runs: the CLI marks its own process (CRUDKIT_CLI), not theirs. */
export function childEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, CRUDKIT_CLI: undefined };
}
