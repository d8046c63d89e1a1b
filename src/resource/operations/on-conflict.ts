// POST /<resource>?onConflict=<field>: a create that, when another record already holds the body's
// value of that unique field, updates that record instead (only the fields sent change, as a
// PATCH), when the caller may update it. Otherwise the create runs as it would without the
// parameter, so a record she may not change answers the plain 409 of a duplicate. The rules,
// hooks, audit and events are the create's or the update's, whichever happened.

import { contextWith } from "../../core/context.ts";
import type { Endpoint, EndpointContext } from "../../core/endpoint.ts";
import { APIError } from "../../core/errors.ts";
import { Versioned } from "../../core/etag.ts";
import type { ResourceRuntime } from "../runtime.ts";
import { mayUpdate } from "./upsert.ts";

/** The create endpoint, taking `onConflict` on the resource's single-field unique sets. */
export function withOnConflict(rt: ResourceRuntime, create: Endpoint, update: Endpoint): Endpoint {
  const fields = uniqueFields(rt);
  const plain = create.handler;
  return {
    ...create,
    async handler(ctx) {
      const field = ctx.query.onConflict;
      if (field === undefined) return plain(ctx);
      if (!fields.includes(field)) throw notUnique(rt.resource.name, field, fields);
      const body = await ctx.readBody();
      const found = await holder(rt, ctx, field, body);
      if (found === undefined) {
        try {
          return await plain(ctx);
        } catch (error) {
          // Created meanwhile by another request: updated, as it would have been a moment later.
          const now =
            error instanceof APIError && error.code === "CONFLICT" && (await holder(rt, ctx, field, body));
          if (!now || !sameRecord(body, now) || !(await mayUpdate(rt, ctx, now, body))) throw error;
          return updated(ctx, now, body);
        }
      }
      // A body naming another id, or a record she may not change: the create's own answer (409).
      if (!sameRecord(body, found) || !(await mayUpdate(rt, ctx, found, body))) return plain(ctx);
      return updated(ctx, found, body);
    },
  };

  async function updated(ctx: EndpointContext, id: string, body: unknown) {
    const { id: _, ...changes } = body as Record<string, unknown>;
    const result = await update.handler(
      contextWith(ctx, { params: { id }, query: {}, readBody: async () => changes }),
    );
    return result instanceof Versioned ? new Versioned(result.data, result.etag, false, 200) : result;
  }
}

/** The fields declared unique on their own (`unique: ["sku"]`): what `onConflict` may name. */
export function uniqueFields(rt: ResourceRuntime): string[] {
  return rt.resource.unique.filter((set) => set.length === 1).map((set) => set[0]!);
}

/** The id of the record holding the body's value of `field`, whoever may see it. */
async function holder(
  rt: ResourceRuntime,
  ctx: EndpointContext,
  field: string,
  body: unknown,
): Promise<string | undefined> {
  if (typeof body !== "object" || body === null || Array.isArray(body) || !Object.hasOwn(body, field))
    return undefined;
  // The value as it would be stored (a schema that trims or lowercases it): a body that does not
  // validate is the create's to refuse, after its rule, not a lookup's.
  let value: unknown;
  try {
    value = rt.validator.create(body)[field];
  } catch {
    return undefined;
  }
  if (typeof value !== "string" && !(typeof value === "number" && Number.isFinite(value))) return undefined;
  const row = await ctx.db
    .selectFrom(rt.resource.name)
    .select("id")
    .where(field, "=", value)
    .executeTakeFirst();
  return row ? String(row.id) : undefined;
}

/** A body without an id, or with the id of the record found. */
function sameRecord(body: unknown, id: string): boolean {
  const given = (body as Record<string, unknown>).id;
  return given === undefined || given === id;
}

function notUnique(resource: string, field: string, fields: readonly string[]): APIError {
  const shown = field.length > 40 ? `${field.slice(0, 40)}…` : field;
  return new APIError(
    "VALIDATION_ERROR",
    `onConflict must name a field of ${resource} declared unique on its own (${fields.join(", ")}); "${shown.replace(/[^\x20-\x7e]/g, "?")}" is not one.`,
    { details: [{ path: "onConflict", message: `One of: ${fields.join(", ")}.` }] },
  );
}
