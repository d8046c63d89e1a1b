// A real browser: headless Chromium loads the example's page, which imports the client bundle
// from the example server, creates a product through the form and shows the list.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, chromiumPresent, launchChromium } from "./chromium.ts";

const present = chromiumPresent;
// Under CI a missing browser is a failure; locally the suite says why it did not run.
const suite = present || process.env.CI ? describe : describe.skip;
const root = new URL("..", import.meta.url).pathname;
const key = "browser-test-key";

let child: ChildProcess | undefined;
let browser: Browser | undefined;
let dir = "";
let origin = "";

beforeAll(async () => {
  if (!present && !process.env.CI) return;
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
  dir = mkdtempSync(join(tmpdir(), "crudkit-browser-"));
  child = spawn(process.execPath, ["--import", "tsx", "examples/server.ts"], {
    cwd: root,
    env: { ...process.env, PORT: String(port), DATA_DIR: dir, API_KEY: key },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the example server did not start")), 20_000);
    child!.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("listening")) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  origin = `http://127.0.0.1:${port}`;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  child?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

suite(`example page in headless Chromium${present ? "" : ` (skipped: ${CHROMIUM} is not installed; apt-get install chromium)`}`, () => {
  it("creates and lists products through crudkit-api/client", async () => {
    const page = await browser!.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${origin}/`);
    await page.fill("#key", key);
    for (const [name, price] of [
      ["Wool hat", "12.5"],
      ["Anorak", "80"],
    ] as const) {
      await page.fill("#name", name);
      await page.fill("#price", price);
      await page.click("button[type=submit]");
      await page.locator("#products li", { hasText: name }).waitFor();
    }
    expect(await page.locator("#products li").allTextContents()).toEqual([
      "Anorak: 80 (draft)",
      "Wool hat: 12.5 (draft)",
    ]);
    expect(await page.textContent("#error")).toBe("");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows the server's error message when the key is wrong", async () => {
    const page = await browser!.newPage();
    await page.goto(`${origin}/`);
    await page.fill("#key", "wrong-key");
    await page.fill("#name", "Nope");
    await page.fill("#price", "1");
    await page.click("button[type=submit]");
    await expect
      .poll(() => page.textContent("#error"))
      .toBe("The API key in the x-api-key header is not valid.");
    await page.close();
  });
});
