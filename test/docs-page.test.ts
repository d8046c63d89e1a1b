// The API reference page: served from the @scalar/api-reference package (no CDN), opt-in, on in
// the example. Headless Chromium loads it and finds the product operations, none of the hosted
// Scalar services' controls (Ask AI, MCP, Share, Deploy, the client button), and no request to any
// origin but this server's; the screenshot is kept in test-artifacts/docs-page.png.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createResource, crudkit, withId } from "crudkit-api";
import { serve } from "crudkit-api/node";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createExampleApp } from "../examples/app.ts";
import { chromiumPresent, launchChromium } from "./chromium.ts";
import { call, tempDatabaseUrl, tempUploadDirs } from "./helpers.ts";

const artifacts = new URL("../test-artifacts/", import.meta.url).pathname;

describe("the docs route", () => {
  it("is off unless asked for; on, it serves the page and the bundle from the package, with a strict CSP", async () => {
    const resources = [createResource({ name: "note", schema: withId({ text: z.string() }) })];
    const off = crudkit({ database: { provider: "sqlite", url: ":memory:" }, resources });
    expect((await call(off, "GET", "/api/docs")).status).toBe(404);
    await off.close();
    const on = crudkit({ database: { provider: "sqlite", url: ":memory:" }, resources, docs: true });
    const page = await on.handler(new Request("http://x/api/docs"));
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('data-url="/api/openapi.json"');
    expect(html).not.toMatch(/https?:\/\//);
    const script = await on.handler(new Request("http://x/api/docs/scalar.js"));
    expect(script.status).toBe(200);
    expect((await script.text()).length).toBeGreaterThan(1_000_000);
    await on.close();
    expect(() =>
      crudkit({ database: { provider: "sqlite", url: ":memory:" }, resources, docs: true, openapi: false }),
    ).toThrow("docs: true shows the OpenAPI document");
  });
});

const suite = chromiumPresent || process.env.CI ? describe : describe.skip;

suite(`the docs page in headless Chromium${chromiumPresent ? "" : " (skipped: /usr/bin/chromium is not installed)"}`, () => {
  let browser: Browser | undefined;
  let server: Awaited<ReturnType<typeof serve>> | undefined;
  beforeAll(async () => {
    const { uploadDir, spoolDir } = tempUploadDirs();
    const app = createExampleApp({
      database: { provider: "sqlite", url: tempDatabaseUrl() },
      uploadDir,
      spoolDir,
      apiKey: "docs-key",
    });
    server = await serve(app, { port: 0 });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("shows the example's product operations, no hosted-service control, and asks no other origin for anything", async () => {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    const origin = new URL(server!.url).origin;
    // Every request the page makes, whatever its kind (scripts, fonts, fetches, beacons).
    const requested: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    await page.route("**/*", (route) =>
      new URL(route.request().url()).origin === origin ? route.continue() : route.abort(),
    );
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${server!.url}/api/docs`);
    await page.getByText("Create a product").first().waitFor({ timeout: 30_000 });
    const text = await page.textContent("body");
    for (const summary of [
      "Create a product",
      "Read a product",
      "Update a product",
      "Delete a product",
      "List products",
    ])
      expect(text).toContain(summary);
    // Open the list, where Scalar puts its request buttons; its parameters show, filters typed
    // field by field (a recursive filter schema once made Scalar show none).
    await page.getByText("List products", { exact: true }).first().click();
    await page.getByText("filter[price]", { exact: true }).first().waitFor({ timeout: 10_000 });
    expect(await page.getByText("Query Parameters").count()).toBeGreaterThan(0);
    for (const name of [
      /ask ai/i,
      /generate mcp/i,
      /connect mcp/i,
      /\bmcp\b/i,
      /^share$/i,
      /deploy/i,
      /open (api )?client/i,
      /open in/i,
      /developer tools/i,
      /configure/i,
      /register|sign in|log in/i,
    ]) {
      expect(await page.getByRole("button", { name }).count(), String(name)).toBe(0);
      expect(await page.getByRole("link", { name }).count(), String(name)).toBe(0);
    }
    mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: join(artifacts, "docs-page.png"), fullPage: false });
    expect(errors).toEqual([]);
    expect(requested.length).toBeGreaterThan(1);
    expect(requested.filter((url) => !url.startsWith("data:") && new URL(url).origin !== origin)).toEqual([]);
    await page.close();
  }, 60_000);
});
