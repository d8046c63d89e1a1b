// defineEndpoint: an endpoint whose query and body are checked against Zod schemas before its
// handler runs, with the input and output types carried to the client.

import { z } from "zod";
import type { Endpoint, EndpointContext, EndpointDoc, HttpMethod, JsonSchema } from "./endpoint.ts";
import { APIError, type ErrorDetail } from "./errors.ts";

/** `{ id: string }` for "/file/:id". */
export type PathParams<Path extends string> = Path extends `${string}:${infer Param}/${infer Rest}`
  ? { [K in Param]: string } & PathParams<`/${Rest}`>
  : Path extends `${string}:${infer Param}`
    ? { [K in Param]: string }
    : unknown;

type InputOf<S> = S extends z.ZodType ? z.input<S> : unknown;
type OutputOf<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What a client method takes: path parameters, query fields and body fields in one object. */
export type EndpointInput<Path extends string, Query, Body> = PathParams<Path> &
  InputOf<Query> &
  InputOf<Body>;

export interface EndpointDefinition<Method extends string, Path extends string, Query, Body, Output> {
  method: HttpMethod;
  path: Path;
  status?: number;
  clientMethod?: Method;
  operationName?: string;
  /** It answers a page of records, which `crudkit({ listETags: true })` tags (see `Endpoint`). */
  lists?: boolean;
  /** Schema of the query parameters (values arrive as strings: use `z.coerce`). */
  query?: Query;
  /** Schema of the JSON body. */
  body?: Body;
  /** For the OpenAPI document; `query` and `body` are filled from the schemas when left out. */
  doc?: EndpointDoc;
  handler(
    ctx: EndpointContext & { input: { query: OutputOf<Query>; body: OutputOf<Body> } },
  ): Promise<Output>;
}

/**
 * A plugin endpoint with checked input: Standard Schema (Zod) `query` and `body`, path parameters
 * from the path, and a typed result, which the client and `app.api` pick up.
 *
 * @example
 * const stats = defineEndpoint({
 *   method: "GET",
 *   path: "/stats/:day",
 *   clientMethod: "stats",
 *   query: z.object({ limit: z.coerce.number().max(100).optional() }),
 *   async handler(ctx) {
 *     return { day: ctx.params.day, limit: ctx.input.query.limit ?? 10 };
 *   },
 * });
 * const plugin = { id: "stats", endpoints: [stats] } satisfies CrudkitPlugin;
 */
export function defineEndpoint<
  const Method extends string = never,
  const Path extends string = string,
  Query extends z.ZodType | undefined = undefined,
  Body extends z.ZodType | undefined = undefined,
  Output = unknown,
>(
  definition: EndpointDefinition<Method, Path, Query, Body, Output>,
): Endpoint<Method, EndpointInput<Path, Query, Body>, Awaited<Output>, Path> & {
  /** Type carrier: the query the endpoint accepts, for `$fetch`. Never set at runtime. */
  readonly $query?: InputOf<Query>;
} {
  const { query, body, handler, doc, ...rest } = definition;
  return {
    ...rest,
    doc: {
      ...(query && !doc?.query ? { query: queryProperties(query as z.ZodType) } : {}),
      ...(body && !doc?.body ? { body: jsonSchemaOf(body as z.ZodType, "input") } : {}),
      ...doc,
    },
    async handler(ctx) {
      const input = {
        query: query ? check(query as z.ZodType, ctx.query, "query") : undefined,
        body: body ? check(body as z.ZodType, await ctx.readBody(), "body") : undefined,
      };
      // The context is made per request, so the checked input can ride on it.
      return handler(Object.assign(ctx, { input }) as never);
    },
  };
}

function check(schema: z.ZodType, value: unknown, where: string): any {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details: ErrorDetail[] = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
  const first = details[0]!;
  throw new APIError(
    "VALIDATION_ERROR",
    `Invalid ${where}: ${first.path ? `${first.path}: ` : ""}${first.message}`,
    { details },
  );
}

/** A Zod schema as JSON Schema; what JSON Schema cannot say (dates, transforms) is left open. */
function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  try {
    const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
    return rest;
  } catch {
    return {};
  }
}

/** The query parameters of an object schema, each with its own schema. */
function queryProperties(schema: z.ZodType): Record<string, JsonSchema> {
  const object = jsonSchemaOf(schema, "input") as { properties?: Record<string, JsonSchema> };
  return object.properties ?? {};
}
