// Node versions, honestly: crudkit claims `engines.node` ">=20", so every package it installs at
// run time (its dependencies and theirs, from package-lock.json) must accept the lowest Node it
// claims and the one running the tests. The optional peers are checked where the docs say what
// they need (@scalar/api-reference, the docs page's script, declares Node 22: docs/openapi.md).

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import semver from "semver";
import { describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));
const readme = readFileSync(join(root, "README.md"), "utf8");
const openapiPage = readFileSync(join(root, "docs/openapi.md"), "utf8");

type Locked = { version: string; dev?: boolean; devOptional?: boolean; engines?: { node?: string } };

describe("engines", () => {
  const lowest = semver.minVersion(pkg.engines.node)!.version;

  it("every runtime dependency, direct or not, accepts the lowest Node crudkit claims and this one", () => {
    const refused: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages as Record<string, Locked>)) {
      if (path === "" || entry.dev || entry.devOptional) continue;
      const range = entry.engines?.node;
      if (!range) continue;
      for (const node of [lowest, process.versions.node])
        if (!semver.satisfies(node, range))
          refused.push(`${path}@${entry.version} wants node ${range} (not ${node})`);
    }
    expect(refused).toEqual([]);
  });

  it("the README states the Node versions the tests run on, the OpenAPI page the docs page's requirement", () => {
    expect(pkg.engines.node).toBe(">=20");
    expect(readme).toContain(`The tests run on Node ${process.versions.node.split(".")[0]}`);
    const scalar = lock.packages["node_modules/@scalar/api-reference"] as Locked;
    const wants = semver.minVersion(scalar.engines!.node!)!.major;
    expect(openapiPage).toContain(`declares Node ${wants} or newer`);
  });
});
