// The admin page with a list of ids (`referencesMany`, issue 41), driven in headless Chromium by role
// and label on SQLite and PostgreSQL: a post's tags are chosen with the reference picker, shown
// by name in order, taken out with their own button, and stored as the list; the tag's page lists
// the posts naming it (its reverse relation, filtered with [has]). Checked with axe in light and
// dark, and screenshotted into test-artifacts/admin-lists-*.png (a wide and a narrow window).

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { AxeBuilder } from "@axe-core/playwright";
import { apiKey, createResource, crudkit, type DatabaseOptions, referencesMany, withId } from "crudkit-api";
import { type RunningServer, serve } from "crudkit-api/node";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { chromiumPresent, launchChromium } from "./chromium.ts";
import { forEachDialect } from "./dialects.ts";

const KEY = "admin-lists-key";
const artifacts = join(new URL("..", import.meta.url).pathname, "test-artifacts");
const suite = chromiumPresent || process.env.CI ? describe : describe.skip;

const signedIn = ({ user }: { user: unknown }) => user !== null;
const everything = { read: signedIn, list: signedIn, create: signedIn, update: signedIn, delete: signedIn };
const tag = createResource({
  name: "tag",
  schema: withId({ name: z.string().max(50) }),
  searchable: ["name"],
  access: everything,
});
const post = createResource({
  name: "post",
  schema: withId({ title: z.string().max(100), tagIds: referencesMany(tag, { maxItems: 5 }) }),
  access: everything,
});
const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [tag, post],
    admin: { title: "Lists" },
    plugins: [apiKey({ keys: { [KEY]: { id: "editor", roles: ["admin"] } } })],
  });

let browser: Browser | undefined;
beforeAll(async () => {
  if (chromiumPresent || process.env.CI) browser = await launchChromium();
}, 60_000);
afterAll(() => browser?.close());

forEachDialect(
  (dialect) => {
    let app: ReturnType<typeof makeApp>;
    let running: RunningServer;
    const tags: Record<string, string> = {};
    beforeAll(async () => {
      app = makeApp(await dialect.fresh());
      running = await serve(app, { port: 0, hostname: "127.0.0.1" });
      for (const name of ["red", "green", "blue", "a tag with a rather long name to wrap"])
        tags[name] = (await app.api.createTag({ body: { name }, overrideAccess: true })).id;
      mkdirSync(artifacts, { recursive: true });
    });
    afterAll(() => running?.close());

    async function signIn(colorScheme: "light" | "dark", width = 1280) {
      const context = await browser!.newContext({ colorScheme, viewport: { width, height: 900 } });
      const page = await context.newPage();
      page.setDefaultTimeout(5000);
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(`${running.url}/api/admin`);
      await page.getByLabel("Key or token").fill(KEY);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("navigation", { name: "Resources" }).waitFor();
      return { context, page, errors };
    }

    /** Picks the tag named `name` in the tagIds picker, by keyboard. */
    async function pick(page: Page, name: string) {
      const picker = page.getByRole("combobox", { name: /^tagIds/ });
      await picker.fill(name);
      await page.getByRole("option", { name: new RegExp(`^${name} \\(`) }).waitFor();
      await picker.press("Enter");
      await page
        .getByRole("list", { name: "tagIds: chosen" })
        .getByRole("link", { name: new RegExp(`^${name} \\(`) })
        .waitFor();
    }

    suite("in headless Chromium", () => {
      it("a post's tags are chosen in order, one taken out, and stored as the list; the tag lists the post", async () => {
        const { context, page, errors } = await signIn("light");
        await page.goto(`${running.url}/api/admin#/post/`);
        await page.getByLabel("title *").fill("Chosen in the admin");
        const chosen = page.getByRole("list", { name: "tagIds: chosen" });
        expect(await chosen.textContent()).toContain("None chosen.");
        await pick(page, "green");
        await pick(page, "red");
        await pick(page, "blue");
        await chosen.getByRole("button", { name: /^Remove red \(/ }).click();
        expect(await chosen.getByRole("link").allTextContents()).toEqual([
          `green (${tags.green})`,
          `blue (${tags.blue})`,
        ]);
        await page.screenshot({
          path: join(artifacts, `admin-lists-${dialect.name}-form.png`),
          fullPage: true,
        });
        await page.getByRole("button", { name: "Create" }).click();
        await page.getByRole("heading", { name: /^post / }).waitFor();
        const stored = await app.api.listPosts({
          overrideAccess: true,
          query: { where: { title: "Chosen in the admin" } },
        });
        expect(stored.items.map((p) => p.tagIds)).toEqual([[tags.green, tags.blue]]);
        // The saved form shows the list by name; the tag's page lists the post.
        await expect
          .poll(() => page.getByRole("list", { name: "tagIds: chosen" }).getByRole("link").allTextContents())
          .toEqual([`green (${tags.green})`, `blue (${tags.blue})`]);
        await chosen.getByRole("link", { name: /^green \(/ }).click();
        await page.getByRole("heading", { name: `tag ${tags.green}` }).waitFor();
        const related = page.getByRole("region", { name: "Related: posts" });
        await related.waitFor();
        await expect.poll(() => related.locator("tbody tr").count()).toBe(1);
        expect(await related.textContent()).toContain("Chosen in the admin");
        await page.screenshot({
          path: join(artifacts, `admin-lists-${dialect.name}-tag.png`),
          fullPage: true,
        });
        expect(errors).toEqual([]);
        await context.close();
      });

      it("passes axe in light and dark, and wraps in a narrow window", async () => {
        const id = (
          await app.api.createPost({
            body: { title: "Many tags", tagIds: Object.values(tags) },
            overrideAccess: true,
          })
        ).id;
        for (const [scheme, width] of [
          ["light", 1280],
          ["dark", 1280],
          ["light", 390],
        ] as const) {
          const { context, page, errors } = await signIn(scheme, width);
          await page.goto(`${running.url}/api/admin#/post/${id}`);
          const chosen = page.getByRole("list", { name: "tagIds: chosen" });
          await expect.poll(() => chosen.getByRole("link").count()).toBe(4);
          await chosen.getByRole("link", { name: /^a tag with a rather long name/ }).waitFor();
          const { violations } = await new AxeBuilder({ page }).analyze();
          expect(
            violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id),
            scheme,
          ).toEqual([]);
          // Nothing runs off the side of a narrow window.
          const overflow = await page.evaluate(
            () => document.documentElement.scrollWidth - window.innerWidth,
          );
          expect(overflow, `${scheme} ${width}`).toBeLessThanOrEqual(0);
          await page.screenshot({
            path: join(artifacts, `admin-lists-${dialect.name}-${scheme}-${width}.png`),
            fullPage: true,
          });
          expect(errors).toEqual([]);
          await context.close();
        }
      });
    });
  },
  ["sqlite", "postgres"],
);
