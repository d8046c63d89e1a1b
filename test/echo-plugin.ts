// A small plugin with client methods, to test the mechanism real plugins use.

import { APIError, type CrudkitPlugin, defineEndpoint } from "crudkit-api";
import { z } from "zod";

export const echoPlugin = {
  id: "echo",
  endpoints: [
    defineEndpoint({
      method: "POST",
      path: "/echo/:room",
      status: 201,
      clientMethod: "echo",
      body: z.strictObject({ message: z.string().min(1), times: z.number().int().min(1).max(5).optional() }),
      handler: async (ctx) => ({
        room: ctx.params.room!,
        message: ctx.input.body.message.repeat(ctx.input.body.times ?? 1),
        user: (await ctx.getUser())?.id ?? null,
        trace: ctx.headers.get("x-trace"),
      }),
    }),
    defineEndpoint({
      method: "GET",
      path: "/echo/stats",
      clientMethod: "echoStats",
      query: z.object({ scale: z.coerce.number<number>().int().min(1).default(1) }),
      handler: async (ctx) => {
        if (!(await ctx.getUser())) throw new APIError("FORBIDDEN", "Sign in to see echo stats.");
        return { rooms: 3 * ctx.input.query.scale };
      },
    }),
    defineEndpoint({
      method: "GET",
      path: "/echo/ping",
      clientMethod: "ping",
      handler: async () => ({ pong: true as const }),
    }),
  ],
} satisfies CrudkitPlugin;
