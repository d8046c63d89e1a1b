// The questions `crudkit init` asks at a terminal: the database and the plugins. Each answer is
// checked and the question asked again until it is one of the choices; closing the input (Ctrl-D,
// Ctrl-C) cancels before anything is written.

import { createInterface } from "node:readline/promises";
import { CliError } from "../load-config.ts";
import {
  DATABASES,
  type DatabaseChoice,
  type InitChoices,
  PLUGIN_NAMES,
  PLUGINS,
  type PluginChoice,
  parseDatabase,
  parsePlugins,
} from "./options.ts";

export interface PromptStreams {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
}

const DATABASE_LINES: Record<DatabaseChoice, string> = {
  sqlite: "SQLite, a file in ./data: nothing else to run",
  postgres: "PostgreSQL, at DATABASE_URL",
  mysql: "MySQL or MariaDB, at DATABASE_URL",
};

/** Asks for each choice not given on the command line (`given`), and returns them all. */
export async function askChoices(
  streams: PromptStreams,
  given: Partial<InitChoices>,
  defaults: InitChoices,
): Promise<InitChoices> {
  const rl = createInterface({ input: streams.input, output: streams.output });
  rl.on("SIGINT", () => rl.close());
  // Lines are read from the iterator, which keeps those typed (or piped) ahead of their question.
  const lines = rl[Symbol.asyncIterator]();
  const ask = async <T>([intro, prompt]: [string, string], parse: (answer: string) => T): Promise<T> => {
    streams.output.write(intro);
    for (;;) {
      rl.setPrompt(prompt);
      rl.prompt();
      const next = await lines.next();
      if (next.done) throw new CliError("Cancelled: nothing was written.");
      try {
        return parse(next.value);
      } catch {
        streams.output.write(`${JSON.stringify(next.value.trim())} is not one of the choices.\n`);
      }
    }
  };
  try {
    const database =
      given.database ??
      (await ask(databaseQuestion(defaults.database), (answer) =>
        answer.trim() === "" ? defaults.database : parseDatabase(byNumber(answer, DATABASES)),
      ));
    const plugins =
      given.plugins ??
      (await ask(pluginQuestion(defaults.plugins), (answer) =>
        answer.trim() === "" ? defaults.plugins : parsePluginAnswer(answer),
      ));
    return { database, plugins };
  } finally {
    rl.close();
  }
}

function databaseQuestion(fallback: DatabaseChoice): [string, string] {
  const lines = DATABASES.map((name, i) => `  ${i + 1}) ${name.padEnd(9)} ${DATABASE_LINES[name]}\n`);
  return [`Database:\n${lines.join("")}`, `A number or a name [${fallback}]: `];
}

function pluginQuestion(fallback: readonly PluginChoice[]): [string, string] {
  const lines = PLUGIN_NAMES.map((name, i) => `  ${i + 1}) ${name.padEnd(12)} ${PLUGINS[name]}\n`);
  const shown = fallback.length > 0 ? fallback.join(",") : "none";
  return [`Plugins:\n${lines.join("")}`, `Numbers or names, comma-separated, or none [${shown}]: `];
}

function parsePluginAnswer(answer: string): PluginChoice[] {
  return parsePlugins(
    answer
      .split(/[\s,]+/)
      .map((part) => byNumber(part, PLUGIN_NAMES))
      .join(","),
  );
}

/** "2" → the second choice; anything else as it is. */
function byNumber(answer: string, choices: readonly string[]): string {
  const n = Number(answer.trim());
  return Number.isInteger(n) && n >= 1 && n <= choices.length ? choices[n - 1]! : answer;
}
