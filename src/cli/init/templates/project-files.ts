// The project's package.json, tsconfig.json, .gitignore and README.md.

import { DATABASE_PROFILES, type ProjectSpec, script, VERSIONS } from "./spec.ts";

export function packageJson(spec: ProjectSpec): string {
  const driver = DATABASE_PROFILES[spec.database].driver;
  const dependencies: Record<string, string> = {
    "crudkit-api": spec.crudkitDependency,
    ...(driver ? { [driver]: VERSIONS[driver] } : {}),
    // `npm start` runs the TypeScript through tsx (Node 20 cannot strip types), so it is not a dev tool.
    tsx: VERSIONS.tsx,
    zod: VERSIONS.zod,
  };
  const manifest = {
    name: spec.name,
    version: "0.1.0",
    private: true,
    type: "module",
    engines: { node: ">=20" },
    scripts: {
      dev: "tsx watch src/server.ts",
      start: "tsx src/server.ts",
      test: "tsc --noEmit && tsx --test test/app.test.ts",
      generate: "crudkit generate",
      migrate: "crudkit migrate",
    },
    dependencies: sorted(dependencies),
    devDependencies: { "@types/node": VERSIONS["@types/node"], typescript: VERSIONS.typescript },
    // npm 11 asks which packages may run install scripts: SQLite's driver builds its addon, tsx's
    // esbuild fetches its binary.
    allowScripts: { "better-sqlite3": true, esbuild: true },
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

export function tsconfigJson(): string {
  const config = {
    compilerOptions: {
      target: "ES2022",
      lib: ["ES2023"],
      module: "NodeNext",
      moduleResolution: "NodeNext",
      types: ["node"],
      strict: true,
      noUncheckedIndexedAccess: true,
      noImplicitOverride: true,
      noFallthroughCasesInSwitch: true,
      verbatimModuleSyntax: true,
      isolatedModules: true,
      // tsx runs the .ts files as they are; tsc only checks them.
      allowImportingTsExtensions: true,
      noEmit: true,
      skipLibCheck: true,
    },
    include: ["src", "test", "crudkit.config.ts"],
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

export function gitignore(spec: ProjectSpec): string {
  return ["node_modules/", ...(spec.database === "sqlite" ? ["data/"] : []), ".env", "*.log", ""].join("\n");
}

export function readme(spec: ProjectSpec): string {
  const profile = DATABASE_PROFILES[spec.database];
  const database =
    spec.database === "sqlite"
      ? "`DATABASE_URL` (default `file:./data/app.db`, SQLite)"
      : `\`DATABASE_URL\` (required: your ${profile.label} database, \`${profile.exampleUrl}\`; \`${script(spec, "test")}\` writes to \`TEST_DATABASE_URL\` when set)`;
  const source = spec.vendored
    ? `crudkit-api ${spec.version} is installed from \`${spec.vendored}\` (it is not on npm yet); once it is, \`npm install crudkit-api@^${spec.version}\` and delete \`vendor/\`.`
    : `crudkit-api ${spec.version} comes from npm (\`crudkit-api@${spec.crudkitDependency}\`).`;
  return `# ${spec.name}

A REST API made with crudkit-api on ${profile.label}: \`src/resources.ts\` defines the resources and their access rules, \`src/app.ts\` the database and plugins.

- \`${script(spec, "dev")}\` serves http://127.0.0.1:3000/api and restarts on changes; \`${script(spec, "start")}\` serves without watching.
- Every request sends the API key in the \`x-api-key\` header: \`API_KEY=secret ${script(spec, "start")}\`, then
  \`curl -X POST http://127.0.0.1:3000/api/task -H 'x-api-key: secret' -H 'content-type: application/json' -d '{"title":"Hello"}'\`.
- Environment: \`PORT\` (3000), \`HOST\` (127.0.0.1), \`API_KEY\` (made up and printed when unset), \`API_USER\` (the user it stands for, \`me\`), \`ADMIN_API_KEY\` (optional: a key that sees every record), ${database}.
- \`${script(spec, "test")}\` type-checks the project and runs \`test/app.test.ts\`.
- \`${script(spec, "generate")}\` writes the SQL for schema changes into \`migrations/\` for review; \`${script(spec, "migrate")}\` applies it (then set \`autoMigrate: false\` in \`src/server.ts\`).
- ${source}
`;
}

function sorted(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
