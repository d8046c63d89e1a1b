// Every file `crudkit init` writes, by path in the project: the templates are string-building
// functions, so they travel inside the built CLI (dist/cli/main.mjs) with nothing else to ship.

import { gitignore, packageJson, readme, tsconfigJson } from "./project-files.ts";
import { appTs, configTs, resourcesTs, serverTs } from "./source-files.ts";
import type { ProjectSpec } from "./spec.ts";
import { appTestTs } from "./test-file.ts";

export type { ProjectSpec } from "./spec.ts";

export interface ProjectFile {
  /** Relative to the project, with "/" between directories. */
  path: string;
  content: string | Uint8Array;
}

export function projectFiles(spec: ProjectSpec): ProjectFile[] {
  return [
    { path: "package.json", content: packageJson(spec) },
    { path: "tsconfig.json", content: tsconfigJson() },
    { path: ".gitignore", content: gitignore(spec) },
    { path: "README.md", content: readme(spec) },
    { path: "crudkit.config.ts", content: configTs() },
    { path: "src/resources.ts", content: resourcesTs() },
    { path: "src/app.ts", content: appTs(spec) },
    { path: "src/server.ts", content: serverTs() },
    { path: "test/app.test.ts", content: appTestTs(spec) },
  ];
}
