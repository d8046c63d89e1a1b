// `crudkit init [dir]`: checks every choice, asks for the missing ones at a terminal, writes the
// project, then installs it (or says how). Anything refused is refused before the first write.

import { basename, relative } from "node:path";
import { CliError } from "../load-config.ts";
import { checkFrom, crudkitSource } from "./crudkit-source.ts";
import { install, installCommand, packageManagerFrom, runPrefix, shellQuote } from "./install.ts";
import { type InitChoices, type InitFlags, parseDatabase, parsePlugins, targetDirectory } from "./options.ts";
import { packageNameFrom } from "./package-name.ts";
import { askChoices, type PromptStreams } from "./prompts.ts";
import { nextSteps, summary } from "./report.ts";
import { projectFiles } from "./templates/index.ts";
import { checkTarget, writeProject } from "./writer.ts";

export interface InitIO {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Whether someone is at a terminal to answer (stdin and stdout are TTYs). */
  interactive: boolean;
  streams: PromptStreams;
  print: (line: string) => void;
  /** The running crudkit-api's version. */
  version: string;
}

const DEFAULTS: InitChoices = { database: "sqlite", plugins: [] };

export async function init(dirArgument: string | undefined, flags: InitFlags, io: InitIO): Promise<void> {
  const given: Partial<InitChoices> = {
    ...(flags.database !== undefined && { database: parseDatabase(flags.database) }),
    ...(flags.plugins !== undefined && { plugins: parsePlugins(flags.plugins) }),
  };
  const dir = targetDirectory(dirArgument ?? ".", io.cwd);
  const from = checkFrom(flags.from, io.cwd);
  const shown = relative(io.cwd, dir) || ".";
  const force = flags.force === true;
  checkTarget(dir, shown, force);

  const choices =
    io.interactive && !flags.yes ? await askChoices(io.streams, given, DEFAULTS) : { ...DEFAULTS, ...given };
  const manager = packageManagerFrom(io.env.npm_config_user_agent);
  const source = crudkitSource(from, io.version, io.print);
  const spec = {
    name: packageNameFrom(basename(dir)),
    ...choices,
    crudkitDependency: source.dependency,
    vendored: source.vendored?.path,
    version: io.version,
    run: runPrefix(manager),
  };
  const files = projectFiles(spec);
  if (source.vendored) files.push(source.vendored);
  const report = writeProject(dir, files, force);
  for (const line of summary(shown, spec, report)) io.print(line);

  // A directory named like an option (`-x`) would be read as one by cd.
  const cd = shown === "." ? [] : [`cd ${shellQuote(shown.startsWith("-") ? `./${shown}` : shown)}`];
  if (flags.install === false) {
    for (const line of nextSteps(spec, [...cd, installCommand(manager)])) io.print(line);
    return;
  }
  io.print(`\nInstalling with ${installCommand(manager)}…`);
  if (!(await install(manager, dir, io.env)))
    throw new CliError(
      `${installCommand(manager)} failed in ${shown}; the project is written, run it again there.${
        source.vendored
          ? ""
          : ` crudkit-api@${spec.crudkitDependency} may not be on npm yet: start again in a new directory with --from <a crudkit-api tarball or checkout>.`
      }`,
    );
  for (const line of nextSteps(spec, cd)) io.print(line);
}
