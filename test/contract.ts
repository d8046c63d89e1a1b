// The contract check every conformance suite runs through `call()`: each JSON answer an app gives
// is validated against that app's own OpenAPI document, for its operation and status, so the
// document cannot drift from the wire. Answers the document does not describe (a route it does
// not know, such as a test's own) are left alone; a documented operation answering a status or a
// body its document does not allow fails the test that made the request.

import { Ajv2020 } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import type { TestResponse } from "./helpers.ts";

interface Checker {
  document: any;
  ajv: Ajv2020;
  templates: { template: string; pattern: RegExp; params: number }[];
}

const checkers = new WeakMap<object, Checker | null>();

function checkerOf(app: object): Checker | null {
  if (checkers.has(app)) return checkers.get(app)!;
  const openapi = (app as { openapi?: () => unknown }).openapi;
  let checker: Checker | null = null;
  if (typeof openapi === "function") {
    const document = openapi.call(app) as any;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    (formats as unknown as { default: (ajv: Ajv2020) => void }).default(ajv);
    ajv.addSchema(document, "openapi.json");
    const templates = Object.keys(document.paths).map((template) => ({
      template,
      pattern: new RegExp(
        `^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\\{[^}]+\\\}|\{[^}]+\}/g, "[^/]+")}$`,
      ),
      params: template.match(/\{/g)?.length ?? 0,
    }));
    checker = { document, ajv, templates };
  }
  checkers.set(app, checker);
  return checker;
}

const pointer = (parts: string[]) => parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

/** Throws when a documented operation's answer does not match its document. */
export function checkContract(app: object, method: string, path: string, res: TestResponse): void {
  const checker = checkerOf(app);
  if (!checker || !res.headers.get("content-type")?.includes("application/json")) return;
  const bare = path.split("?")[0]!;
  const verb = method.toLowerCase();
  const match = checker.templates
    .filter((t) => t.pattern.test(bare) && checker.document.paths[t.template][verb])
    .sort((a, b) => a.params - b.params)[0];
  if (!match) return;
  const responses = checker.document.paths[match.template][verb].responses;
  // Statuses the whole app may answer anywhere (a body too large, a timeout) are not per operation.
  if (!responses[String(res.status)]) {
    if ([405, 408, 413, 415, 431, 503].includes(res.status)) return;
    throw new Error(
      `contract: ${method} ${match.template} answered ${res.status}, which its OpenAPI document does not list`,
    );
  }
  const schema = responses[String(res.status)].content?.["application/json"]?.schema;
  if (!schema) return;
  const ref = `openapi.json#/${pointer(["paths", match.template, verb, "responses", String(res.status), "content", "application/json", "schema"])}`;
  const validate = checker.ajv.getSchema(ref) ?? checker.ajv.compile({ $ref: ref });
  if (!validate(res.body))
    throw new Error(
      `contract: ${method} ${path} ${res.status} does not match its OpenAPI schema: ${JSON.stringify(validate.errors?.slice(0, 3))} in ${res.text.slice(0, 300)}`,
    );
}
