// PUT /<resource>/:id → the record with that id, whole: 201 when the PUT created it (under the
// create rule), 200 when it replaced it (under the update rule and its row rule; the fields it
// leaves out take their defaults). An id the caller may not update answers what a POST with that
// id answers (409 when it exists), so a PUT tells nothing a POST does not. `If-None-Match: *`
// creates only; `If-Match` replaces only that version. Both ways run the create and update
// endpoints themselves: the same rules, validation, hooks, audit and events.

import { contextWith } from "../../core/context.ts";
import type { Endpoint, EndpointContext } from "../../core/endpoint.ts";
import { APIError } from "../../core/errors.ts";
import { Versioned } from "../../core/etag.ts";
import { denyWithoutRule } from "../access.ts";
import { decide } from "../admission.ts";
import { capitalize, type ResourceRuntime } from "../runtime.ts";

export function upsertEndpoint(rt: ResourceRuntime, create: Endpoint, update: Endpoint): Endpoint {
  const { resource } = rt;

  /** The create endpoint with the path's id in the body: a POST with that id, answered 201. */
  const created = async (ctx: EndpointContext, body: unknown, id: string) => {
    const made = await create.handler(contextWith(ctx, { readBody: async () => withId(body, id) }));
    return made instanceof Versioned ? new Versioned(made.data, made.etag, false, 201) : made;
  };
  const replaced = (ctx: EndpointContext, body: unknown) =>
    update.handler(contextWith(ctx, { replace: true, readBody: async () => body }));

  return {
    method: "PUT",
    path: `/${resource.name}/:id`,
    operationName: `upsert${capitalize(resource.name)}`,
    async handler(ctx) {
      const { access } = resource;
      // Neither way open: refused before anything is looked up.
      if (!ctx.overrideAccess && !isRule(access.create) && !isRule(access.update))
        denyWithoutRule(access.create, "create", resource.name);
      const id = ctx.params.id!;
      const body = await ctx.readBody();
      refuseOtherId(body, id, resource.name);
      const createOnly = ctx.headers.get("if-none-match")?.trim() === "*";
      // If-Match replaces only: a missing id and one the caller may not update are the same 412.
      if (ctx.headers.has("if-match")) return replaceVersion(ctx, body, id);
      if (!(await rt.store.findById(ctx.db, id))) {
        try {
          return await created(ctx, body, id);
        } catch (error) {
          // Created meanwhile by another request (the engine may name its id or another unique
          // field first): replaced, when it is the caller's to replace.
          if (createOnly || !isConflict(error) || !(await rt.store.findById(ctx.db, id))) throw error;
          if (!(await mayUpdate(rt, ctx, id, body))) throw error;
          return replaced(ctx, body);
        }
      }
      if (!(await mayUpdate(rt, ctx, id, body))) return created(ctx, body, id);
      if (createOnly)
        throw new APIError(
          "PRECONDITION_FAILED",
          `This ${resource.name} id is taken (If-None-Match: * creates only); nothing was changed.`,
        );
      try {
        return await replaced(ctx, body);
      } catch (error) {
        // Deleted meanwhile: created again, as a PUT to a missing id is.
        if (error instanceof APIError && error.code === "NOT_FOUND") return created(ctx, body, id);
        throw error;
      }
    },
  };

  async function replaceVersion(ctx: EndpointContext, body: unknown, id: string) {
    if (!(await rt.store.findById(ctx.db, id)) || !(await mayUpdate(rt, ctx, id, body)))
      throw noSuchVersion(resource.name);
    try {
      return await replaced(ctx, body);
    } catch (error) {
      if (error instanceof APIError && error.code === "NOT_FOUND") throw noSuchVersion(resource.name);
      throw error;
    }
  }
}

function isRule(rule: unknown): boolean {
  return rule !== undefined && rule !== false;
}

/** Whether the update rule lets the caller change this record (its row rule included); no 403 of its own. */
export async function mayUpdate(
  rt: ResourceRuntime,
  ctx: EndpointContext,
  id: string,
  body: unknown,
): Promise<boolean> {
  if (ctx.overrideAccess) return true;
  if (!isRule(rt.resource.access.update)) return false;
  let scope: Awaited<ReturnType<typeof decide>>["scope"];
  try {
    const user = await ctx.getUser();
    ({ scope } = await decide(rt, {
      user,
      headers: ctx.headers,
      operation: "update",
      resource: rt.resource.name,
      id,
      body,
      db: ctx.db,
      cache: ctx.cache,
    }));
  } catch (error) {
    if (error instanceof APIError && error.code === "FORBIDDEN") return false;
    throw error;
  }
  return scope === undefined || (await rt.store.findById(ctx.db, id, scope)) !== undefined;
}

/** The body's own id, when it has one, must be the path's: a PUT names its record once. */
function refuseOtherId(body: unknown, id: string, resource: string): void {
  if (typeof body !== "object" || body === null || Array.isArray(body) || !Object.hasOwn(body, "id")) return;
  if ((body as { id: unknown }).id === id) return;
  throw new APIError(
    "VALIDATION_ERROR",
    `Invalid ${resource}: the id in the body differs from the id in the path.`,
    {
      details: [{ path: "id", message: "Must be the id in the path, or be left out." }],
    },
  );
}

function withId(body: unknown, id: string): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
  // A spread defines own properties: a "__proto__" key stays a key.
  return { ...(body as Record<string, unknown>), id };
}

function isConflict(error: unknown): boolean {
  return error instanceof APIError && error.code === "CONFLICT";
}

function noSuchVersion(resource: string): APIError {
  return new APIError(
    "PRECONDITION_FAILED",
    `No ${resource} of yours with this id has the version If-Match names; nothing was changed.`,
  );
}
