// The contract check every conformance suite runs through `call()`: each request and each JSON
// answer is checked against the app's own OpenAPI document, for its operation, so the document
// cannot drift from the wire.
// - The request: its query parameters read as the document says (`filter` as a deepObject,
//   `expand` comma-separated, numbers and booleans from text) and its JSON body, against the
//   operation's schemas. A request the document calls invalid must be refused with a 4xx.
// - The answer: its status must be one the operation lists, and its body must match that status's
//   schema (whether the request was valid or not).
// Routes the document does not know (a test's own) are left alone. What the server takes beyond
// the document's letter, and the document says in words, is read as the server reads it:
// - an empty query value counts as not given;
// - `limit` above its maximum is clamped to it;
// - `sortOrder` is read case-insensitively;
// - a date-time may be a date alone or lack its offset (read as UTC).

import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import { dateFromIso } from "../src/core/iso-date.ts";
import { readFilter } from "../src/query/bracket-query.ts";
import type { TestResponse } from "./helpers.ts";

type Schema = Record<string, any>;

interface Template {
  template: string;
  pattern: RegExp;
  params: number;
}

interface Checker {
  document: any;
  /** Answers are checked with the formats' letter; requests as the server reads them. */
  answers: Ajv2020;
  requests: Ajv2020;
  templates: Template[];
  /** The path the document's paths start after (the server URL's path). */
  base: string;
}

/** What `call()` sent besides the method and path. */
export interface SentRequest {
  headers: Headers;
  /** The body as text; undefined when none was sent, or when it was not text (a stream). */
  text: string | undefined;
  hasBody: boolean;
}

const checkers = new WeakMap<object, Checker | null>();

function newAjv(lenientDates: boolean): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (formats as unknown as { default: (ajv: Ajv2020) => void }).default(ajv);
  if (lenientDates) ajv.addFormat("date-time", (text: string) => dateFromIso(text) !== undefined);
  return ajv;
}

function checkerOf(app: object): Checker | null {
  if (checkers.has(app)) return checkers.get(app)!;
  const openapi = (app as { openapi?: () => unknown }).openapi;
  let checker: Checker | null = null;
  if (typeof openapi === "function") {
    const document = openapi.call(app) as any;
    const answers = newAjv(false);
    const requests = newAjv(true);
    answers.addSchema(document, "openapi.json");
    requests.addSchema(document, "openapi.json");
    const templates = Object.keys(document.paths).map((template) => ({
      template,
      pattern: new RegExp(
        `^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\\{[^}]+\\\}|\{[^}]+\}/g, "[^/]+")}$`,
      ),
      params: template.match(/\{/g)?.length ?? 0,
    }));
    const base = new URL(document.servers?.[0]?.url ?? "/", "http://localhost").pathname.replace(/\/$/, "");
    checker = { document, answers, requests, templates, base };
  }
  checkers.set(app, checker);
  return checker;
}

const pointer = (parts: (string | number)[]) =>
  parts.map((p) => String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

function validator(ajv: Ajv2020, parts: (string | number)[]): ValidateFunction {
  const ref = `openapi.json#/${pointer(parts)}`;
  return ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
}

/**
 * Throws when a documented operation's answer does not match its document, or when it accepted a
 * request its document calls invalid.
 */
export function checkContract(
  app: object,
  method: string,
  path: string,
  res: TestResponse,
  sent?: SentRequest,
): void {
  const checker = checkerOf(app);
  if (!checker) return;
  const url = new URL(path, "http://localhost");
  if (!url.pathname.startsWith(checker.base)) return;
  const bare = url.pathname.slice(checker.base.length) || "/";
  const verb = method.toLowerCase();
  const match = checker.templates
    .filter((t) => t.pattern.test(bare) && checker.document.paths[t.template][verb])
    .sort((a, b) => a.params - b.params)[0];
  if (!match) return;
  const at = ["paths", match.template, verb];
  if (sent) {
    const problems = requestProblems(checker, at, url.searchParams, sent);
    if (problems.length > 0 && (res.status < 400 || res.status >= 500))
      throw new Error(
        `contract: ${method} ${path} is invalid by its OpenAPI document (${problems.join("; ")}) but was answered ${res.status}: ${res.text.slice(0, 300)}`,
      );
  }
  checkAnswer(checker, at, method, path, res);
}

function checkAnswer(checker: Checker, at: string[], method: string, path: string, res: TestResponse): void {
  if (!res.headers.get("content-type")?.includes("application/json")) return;
  const responses = checker.document.paths[at[1]!][at[2]!].responses;
  // Statuses the whole app may answer anywhere (a body too large, a timeout) are not per operation.
  if (!responses[String(res.status)]) {
    if ([405, 408, 413, 415, 431, 503].includes(res.status)) return;
    throw new Error(
      `contract: ${method} ${at[1]} answered ${res.status}, which its OpenAPI document does not list`,
    );
  }
  if (!responses[String(res.status)].content?.["application/json"]?.schema) return;
  const validate = validator(checker.answers, [
    ...at,
    "responses",
    String(res.status),
    "content",
    "application/json",
    "schema",
  ]);
  if (!validate(res.body))
    throw new Error(
      `contract: ${method} ${path} ${res.status} does not match its OpenAPI schema: ${JSON.stringify(validate.errors?.slice(0, 3))} in ${res.text.slice(0, 300)}`,
    );
}

/** Why the request does not fit its operation's document; empty when it does. */
export function requestProblems(
  checker: Checker,
  at: string[],
  search: URLSearchParams,
  sent: SentRequest,
): string[] {
  const operation = checker.document.paths[at[1]!][at[2]!];
  const problems: string[] = [];
  // The server reads the first value of each parameter.
  const query: Record<string, string> = {};
  for (const [name, value] of search) if (!(name in query)) query[name] = value;
  (operation.parameters ?? []).forEach((parameter: Schema, index: number) => {
    if (parameter.in !== "query") return;
    let value: unknown;
    try {
      value = queryValue(checker, parameter, query);
    } catch (error) {
      problems.push(`${parameter.name}: ${(error as Error).message}`);
      return;
    }
    if (value === undefined) {
      if (parameter.required) problems.push(`${parameter.name} is required`);
      return;
    }
    const validate = validator(checker.requests, [...at, "parameters", index, "schema"]);
    if (!validate(value)) problems.push(`${parameter.name}: ${ajvText(validate)}`);
  });
  const body = operation.requestBody;
  if (body) problems.push(...bodyProblems(checker, at, body, sent));
  return problems;
}

/** A query parameter's value as the document reads it, typed; undefined when not given. */
function queryValue(checker: Checker, parameter: Schema, query: Record<string, string>): unknown {
  const schema = resolve(checker, parameter.schema);
  if (parameter.style === "deepObject") {
    const own: Record<string, string> = {};
    for (const [name, value] of Object.entries(query))
      if (name.startsWith(`${parameter.name}[`)) own[`filter${name.slice(parameter.name.length)}`] = value;
    // The server's own reader of bracket paths: a malformed name is a malformed request.
    const object = readFilter(own);
    return object === undefined ? undefined : coerce(checker, schema, object);
  }
  let text = query[parameter.name];
  if (text === undefined || text === "") return undefined;
  if (parameter.name === "sortOrder") text = text.toLowerCase();
  const value = coerce(checker, schema, text);
  if (parameter.name === "limit" && typeof value === "number" && typeof schema.maximum === "number")
    return Math.min(value, schema.maximum);
  return value;
}

function bodyProblems(checker: Checker, at: string[], body: Schema, sent: SentRequest): string[] {
  if (!sent.hasBody) return body.required ? ["a body is required"] : [];
  const type = sent.headers.get("content-type") ?? "";
  const json = Object.keys(body.content ?? {}).find((t) => t === "application/json");
  if (!json) return [];
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type))
    return [`the body's content-type is ${JSON.stringify(type)}, not application/json`];
  if (sent.text === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(sent.text);
  } catch {
    return ["the body is not JSON"];
  }
  const validate = validator(checker.requests, [
    ...at,
    "requestBody",
    "content",
    "application/json",
    "schema",
  ]);
  return validate(parsed) ? [] : [`body: ${ajvText(validate)}`];
}

function ajvText(validate: ValidateFunction): string {
  return JSON.stringify(validate.errors?.slice(0, 3));
}

function resolve(checker: Checker, schema: Schema | undefined): Schema {
  let current = schema ?? {};
  for (let hops = 0; typeof current.$ref === "string" && hops < 10; hops++) {
    const name = /^#\/components\/schemas\/(.+)$/.exec(current.$ref)?.[1];
    current = name ? checker.document.components.schemas[name] : {};
  }
  return current;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Text from a query string as the schema types it: numbers and booleans from their text, arrays
 * comma-separated or as numbered keys, objects property by property. Text that does not read as
 * the type is left as it is, for the validator to refuse.
 */
function coerce(checker: Checker, given: Schema, raw: unknown): unknown {
  const schema = resolve(checker, given);
  if (Array.isArray(schema.anyOf)) {
    const options = schema.anyOf.map((o: Schema) => resolve(checker, o));
    const structured = options.find((o: Schema) => o.type === (isObject(raw) ? "object" : undefined));
    if (structured) return coerce(checker, structured, raw);
    for (const option of options) {
      if (option.type === "object") continue;
      const value = coerce(checker, option, raw);
      if (value !== raw || option.type === "string") return value;
    }
    return raw;
  }
  switch (schema.type) {
    case "object":
      if (!isObject(raw)) return raw;
      return Object.fromEntries(
        Object.entries(raw).map(([key, value]) => {
          const property = schema.properties?.[key];
          return [key, property ? coerce(checker, property, value) : value];
        }),
      );
    case "array": {
      let list: unknown = raw;
      if (typeof raw === "string") list = raw.split(",");
      else if (isObject(raw) && Object.keys(raw).every((k) => /^\d{1,3}$/.test(k)))
        list = Object.keys(raw)
          .sort((a, b) => Number(a) - Number(b))
          .map((k) => raw[k]);
      return Array.isArray(list) ? list.map((item) => coerce(checker, schema.items ?? {}, item)) : raw;
    }
    case "integer":
    case "number":
      return typeof raw === "string" && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(raw) ? Number(raw) : raw;
    case "boolean":
      return raw === "true" ? true : raw === "false" ? false : raw;
    default:
      return raw;
  }
}
