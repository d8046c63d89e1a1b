// What `crudkit init` prints once the files are written: what it wrote, what it kept aside, and
// the commands to run next.

import { DATABASE_PROFILES, type ProjectSpec, script } from "./templates/spec.ts";
import type { WriteReport } from "./writer.ts";

export function summary(shown: string, spec: ProjectSpec, report: WriteReport): string[] {
  const plugins = spec.plugins.length > 0 ? spec.plugins.join(", ") : "none";
  const lines = [
    `Wrote the project ${spec.name} in ${shown === "." ? "this directory" : shown} (crudkit-api ${spec.crudkitDependency}, ${DATABASE_PROFILES[spec.database].label}, plugins: ${plugins}):`,
    `  ${report.written.join(", ")}`,
  ];
  if (report.backedUp.length > 0) {
    lines.push("Kept what was in the way under another name:");
    for (const { path, backup } of report.backedUp) lines.push(`  ${path} → ${backup}`);
  }
  return lines;
}

export function nextSteps(spec: ProjectSpec, first: readonly string[]): string[] {
  const profile = DATABASE_PROFILES[spec.database];
  const env = spec.database === "sqlite" ? "" : `DATABASE_URL=${profile.exampleUrl} `;
  const lines = [
    "",
    "Next:",
    ...first.map((command) => `  ${command}`),
    `  ${env}API_KEY=secret ${script(spec, "dev")}`,
    `  curl -X POST http://127.0.0.1:3000/api/task -H 'x-api-key: secret' -H 'content-type: application/json' -d '{"title":"Hello"}'`,
    `  ${spec.database === "sqlite" ? "" : env}${script(spec, "test")}`,
  ];
  if (spec.vendored)
    lines.push(
      "",
      `crudkit-api is installed from ${spec.vendored} (it is not on npm yet); the README says how to switch once it is.`,
    );
  return lines;
}
