// The resources most tests use: the spec's product, and a resource with every field kind.

import { createResource, withId } from "crudkit-api";
import { z } from "zod";

export const productSchema = withId({
  name: z.string().min(1),
  price: z.number().min(0),
  status: z.enum(["active", "inactive", "draft"]).default("draft"),
  createdAt: z.date().default(() => new Date()),
  updatedAt: z.date().default(() => new Date()),
});

export const openProduct = createResource({
  name: "product",
  schema: productSchema,
  searchable: ["name"],
  access: { create: true, read: true, update: true, delete: true, list: true },
});

export const gadget = createResource({
  name: "gadget",
  schema: withId({
    label: z.string(),
    description: z.string().optional(),
    note: z.string().nullable(),
    count: z.number().int(),
    weight: z.number(),
    inStock: z.boolean(),
    kind: z.enum(["small", "large"]),
    releasedAt: z.date(),
    tags: z.array(z.string()),
    dimensions: z.object({ width: z.number(), height: z.number() }),
  }),
  searchable: ["label", "description"],
  access: { create: true, read: true, update: true, delete: true, list: true },
});

/** A JSON field whose value may be a bare string or number. */
export const loose = createResource({
  name: "loose",
  schema: withId({ payload: z.union([z.string(), z.number()]) }),
  access: { create: true, read: true },
});

/** JSON fields, a nested date and an optional field: what the input rules are tested on. */
export const journal = createResource({
  name: "journal",
  schema: withId({
    title: z.string().min(1),
    subtitle: z.string().optional(),
    data: z.record(z.string(), z.unknown()).optional(),
    events: z.array(z.object({ at: z.date(), what: z.string() })).default([]),
  }),
  searchable: ["title"],
  access: { create: true, read: true, update: true, delete: true, list: true },
});

/** Creates always fail in a hook, as a bug would: a 500 whose cause must stay on the server. */
export const failing = createResource({
  name: "failing",
  schema: withId({ name: z.string() }),
  access: { create: true, read: true, list: true },
  hooks: {
    beforeCreate: () => {
      throw new Error("a bug in a hook, with a secret path /srv/app/hooks.ts");
    },
  },
});
