// A validated create's record as it is stored: the id it was given (or a new one) and, for a
// resource with timestamps, its createdAt and updatedAt.

import { uuidv7 } from "../core/id.ts";
import type { ResourceRuntime } from "./runtime.ts";

export function newRecord(rt: ResourceRuntime, data: Record<string, unknown>): Record<string, unknown> {
  const { id, ...fields } = data;
  const record: Record<string, unknown> = { id: typeof id === "string" ? id : uuidv7(), ...fields };
  if (rt.resource.timestamps) {
    const now = new Date().toISOString();
    record.createdAt = now;
    record.updatedAt = now;
  }
  return record;
}
