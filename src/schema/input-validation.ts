// Validates create and update bodies against a resource's schema. The Zod schemas are built once
// per resource; per request this is one pass over date fields and one safeParse.

import { z } from "zod";
import { APIError, type ErrorDetail } from "../core/errors.ts";
import { dateReviver } from "./date-revival.ts";
import { type Field, withoutDefault } from "./field-model.ts";

export interface InputValidator {
  /** A create body, defaults applied. Throws a 400 `VALIDATION_ERROR`. */
  create(body: unknown): Record<string, unknown>;
  /** An update body: only the fields sent, no defaults. Throws a 400 `VALIDATION_ERROR`. */
  update(body: unknown): Record<string, unknown>;
}

/** Dates every database stores as sent (MySQL's DATETIME starts at year 1000). */
const EARLIEST = Date.UTC(1000, 0, 1);
const LATEST = Date.UTC(10000, 0, 1) - 1;
const DEFAULT_ID = z.string().min(1).max(255).optional();

export function createInputValidator(
  resourceName: string,
  fields: readonly Field[],
  serverManaged: readonly string[],
): InputValidator {
  const managed = new Set(serverManaged);
  const writable = fields.filter((f) => !managed.has(f.name) && f.name !== "id");
  const idField = fields.find((f) => f.name === "id");
  const dateFields = fields.filter((f) => f.kind === "date").map((f) => f.name);
  const revivers = fields.flatMap((f) => {
    const revive = dateReviver(f.schema);
    return revive ? [[f.name, revive] as const] : [];
  });

  const createShape: Record<string, z.ZodType> = { id: idField ? idField.schema.optional() : DEFAULT_ID };
  // The id is a path segment later; it must be a non-empty string whatever the schema says.
  const updateShape: Record<string, z.ZodType> = {};
  for (const field of writable) {
    createShape[field.name] = field.schema;
    // An optional field is cleared by sending null; it then reads back absent.
    const updatable = withoutDefault(field.schema);
    updateShape[field.name] =
      field.optional && !field.nullable ? updatable.nullable().optional() : updatable.optional();
  }
  const createSchema = z.strictObject(createShape);
  const updateSchema = z.strictObject(updateShape);
  const readOnlyOnUpdate = new Set([...managed, "id"]);
  const known = new Set(Object.keys(createShape));

  const check = (
    schema: z.ZodType,
    body: unknown,
    readOnly: ReadonlySet<string>,
  ): Record<string, unknown> => {
    const input = reviveDates(asObject(resourceName, body), revivers);
    // A body of thousands of unknown keys is refused on its keys alone, before any validation.
    const unknown = unknownKeys(input, known, readOnly);
    if (unknown.length > MAX_DETAILS) throw validationError(resourceName, unknown);
    const readOnlyErrors = readOnlyDetails(input, readOnly);
    const result = schema.safeParse(input);
    const details = [
      ...readOnlyErrors,
      ...(result.success
        ? dateRangeDetails(result.data as Record<string, unknown>, dateFields)
        : issueDetails(result.error.issues, readOnly)),
    ];
    if (details.length > 0) throw validationError(resourceName, details);
    return result.data as Record<string, unknown>;
  };

  return {
    create: (body) => check(createSchema, body, managed),
    update: (body) => check(updateSchema, body, readOnlyOnUpdate),
  };
}

function asObject(resourceName: string, body: unknown): Record<string, unknown> {
  if (typeof body === "object" && body !== null && !Array.isArray(body))
    return body as Record<string, unknown>;
  throw validationError(resourceName, [
    { path: "", message: "Expected a JSON object with the fields to write." },
  ]);
}

/** Dates accept ISO 8601 strings on the wire, nested ones too; they become Date objects before validation. */
function reviveDates(
  input: Record<string, unknown>,
  revivers: readonly (readonly [string, (value: unknown) => unknown])[],
): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const [name, revive] of revivers) {
    const value = input[name];
    if (value === undefined) continue;
    const revived = revive(value);
    if (revived === value) continue;
    copy ??= { ...input };
    copy[name] = revived;
  }
  return copy ?? input;
}

function dateRangeDetails(data: Record<string, unknown>, dateFields: readonly string[]): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const name of dateFields) {
    const value = data[name];
    if (!(value instanceof Date)) continue;
    const time = value.getTime();
    if (time < EARLIEST || time > LATEST)
      details.push({ path: name, message: "Dates must fall between the years 1000 and 9999." });
  }
  return details;
}

function readOnlyDetails(input: Record<string, unknown>, readOnly: ReadonlySet<string>): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const name of readOnly) {
    if (input[name] !== undefined)
      details.push({ path: name, message: `"${name}" is read-only and is set by the server.` });
  }
  return details;
}

function issueDetails(issues: readonly z.core.$ZodIssue[], readOnly: ReadonlySet<string>): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        if (issue.path.length === 0 && readOnly.has(key)) continue;
        details.push({ path: [...issue.path, key].join("."), message: `Unknown field "${key}".` });
      }
    } else {
      details.push({ path: issue.path.map(String).join("."), message: issue.message });
    }
  }
  return details;
}

/** Most problems an answer lists; the message counts the rest. */
const MAX_DETAILS = 50;

/** Top-level keys the resource does not have (read-only ones are reported on their own). */
function unknownKeys(
  input: Record<string, unknown>,
  known: ReadonlySet<string>,
  readOnly: ReadonlySet<string>,
): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const key in input)
    if (!known.has(key) && !readOnly.has(key))
      details.push({ path: key, message: `Unknown field "${key}".` });
  return details;
}

function validationError(resourceName: string, details: ErrorDetail[]): APIError {
  const listed = details.slice(0, MAX_DETAILS).map(clipped);
  const [first] = listed;
  const where = first?.path ? `${first.path}: ` : "";
  const more =
    details.length > 1
      ? ` (and ${details.length - 1} more${details.length > MAX_DETAILS ? `; the first ${MAX_DETAILS} are listed` : ""})`
      : "";
  return new APIError("VALIDATION_ERROR", `Invalid ${resourceName}: ${where}${first?.message}${more}`, {
    details: listed,
  });
}

/** A detail whose path or message echoes a huge key, cut short. */
function clipped(detail: ErrorDetail): ErrorDetail {
  const cut = (text: string) => (text.length > 120 ? `${text.slice(0, 120)}…` : text);
  return detail.path.length > 120 || detail.message.length > 240
    ? { path: cut(detail.path), message: cut(detail.message) }
    : detail;
}
