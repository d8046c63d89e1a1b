// `GET <basePath>/admin/permissions`: what the admin page may offer its caller, asked of her own
// rules through app.can() (never with the server's authority). Without `resource`: per resource,
// whether she may list and create, and the fields she never reads. With `resource` (and `id`, a
// record on screen): whether she may read, update and delete it, and which of `fields` she may
// not write, each with the reason a request would get. It says whether, never which rows.

import type { EndpointContext } from "../core/endpoint.ts";
import { APIError } from "../core/errors.ts";
import type { PluginContext, PluginPermission } from "../core/plugin.ts";

/** One answer: allowed, or not and why. */
export interface Verdict {
  allowed: boolean;
  reason?: string;
}

export interface ResourcePermissions {
  name: string;
  plural: string;
  list: Verdict;
  create: Verdict;
  /** Fields she may not read on any record. */
  hiddenFields: string[];
}

export interface RecordPermissions {
  read: Verdict;
  update: Verdict;
  delete: Verdict;
  /** Fields hidden from her on this record (or on every record, without one). */
  hiddenFields: string[];
  /** Of the fields asked about, those she may not write here, with why. */
  readOnly: Record<string, string>;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_FIELDS = 200;
const MAX_ID = 255;

const verdict = ({ allowed, reason }: PluginPermission): Verdict =>
  allowed || reason === undefined ? { allowed } : { allowed, reason };

/** The caller's permissions on every resource. */
export async function resourcePermissions(
  app: PluginContext,
  ctx: EndpointContext,
): Promise<ResourcePermissions[]> {
  return Promise.all(
    app.resources.map(async ({ name, plural }) => {
      const [list, create] = await Promise.all([app.can("list", name, ctx), app.can("create", name, ctx)]);
      return { name, plural, list: verdict(list), create: verdict(create), hiddenFields: list.hiddenFields };
    }),
  );
}

/** The caller's permissions on one resource's record `id` (or on a new record, without one). */
export async function recordPermissions(
  app: PluginContext,
  ctx: EndpointContext,
): Promise<RecordPermissions> {
  const { resource, id, fields } = recordQuery(app, ctx.query);
  const asked = id === undefined ? {} : { id };
  const [read, update, remove] = await Promise.all([
    app.can("read", resource, ctx, asked),
    app.can("update", resource, ctx, asked),
    app.can("delete", resource, ctx, asked),
  ]);
  const readOnly: Record<string, string> = {};
  // Writing means updating a record, or creating one when none is named.
  const operation = id === undefined ? "create" : "update";
  if (id === undefined || update.allowed)
    for (const field of fields) {
      const answer = await app.can(operation, resource, ctx, { ...asked, body: { [field]: null } });
      if (!answer.allowed && answer.reason !== undefined) readOnly[field] = answer.reason;
    }
  return {
    read: verdict(read),
    update: verdict(update),
    delete: verdict(remove),
    hiddenFields: read.hiddenFields,
    readOnly,
  };
}

function recordQuery(
  app: PluginContext,
  query: Readonly<Record<string, string | undefined>>,
): { resource: string; id: string | undefined; fields: string[] } {
  for (const key of Object.keys(query))
    if (key !== "resource" && key !== "id" && key !== "fields")
      throw new APIError(
        "BAD_REQUEST",
        `Unknown query parameter "${key.slice(0, 64)}": use resource, id and fields.`,
      );
  const resource = query.resource ?? "";
  if (!app.resources.some((r) => r.name === resource))
    throw new APIError("BAD_REQUEST", "resource must name one of the app's resources.");
  const id = query.id;
  if (id !== undefined && (id.length === 0 || id.length > MAX_ID || id.includes("\0")))
    throw new APIError("BAD_REQUEST", `id must be 1 to ${MAX_ID} characters, without NUL.`);
  const fields = query.fields ? query.fields.split(",") : [];
  if (fields.length > MAX_FIELDS || fields.some((f) => !NAME.test(f)))
    throw new APIError("BAD_REQUEST", `fields must be up to ${MAX_FIELDS} field names, separated by commas.`);
  return { resource, id, fields: [...new Set(fields)] };
}
