// The client bundle holds no server code and stays small.

import { describe, expect, it } from "vitest";
import { bundleClient } from "../scripts/bundle-client.ts";

describe("crudkit-api/client bundle", () => {
  it("is built from src/client alone: no server, Kysely, better-sqlite3 or Zod", async () => {
    const bundle = await bundleClient();
    expect(bundle.inputs.sort()).toEqual([
      "src/client/aggregate-params.ts",
      "src/client/batch.ts",
      "src/client/client.ts",
      "src/client/filter-params.ts",
      "src/client/index.ts",
      "src/client/request.ts",
      "src/client/subscribe.ts",
    ]);
    for (const marker of ["kysely", "better-sqlite3", "zod", "node:", "require("])
      expect(bundle.code).not.toContain(marker);
  });

  it("is at most 6 KB minified + gzip", async () => {
    const bundle = await bundleClient();
    expect(bundle.gzipped).toBeLessThanOrEqual(6 * 1024);
  });
});
