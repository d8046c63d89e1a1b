// The five endpoints of a resource, and the in-process names they answer to.

import type { Endpoint } from "../core/endpoint.ts";
import { aggregateEndpoint } from "./operations/aggregate.ts";
import { createEndpoint } from "./operations/create.ts";
import { deleteEndpoint } from "./operations/delete.ts";
import { listEndpoint } from "./operations/list.ts";
import { withOnConflict } from "./operations/on-conflict.ts";
import { readEndpoint } from "./operations/read.ts";
import { updateEndpoint } from "./operations/update.ts";
import { upsertEndpoint } from "./operations/upsert.ts";
import { typeLevelPlural } from "./plural.ts";
import { capitalize, type ResourceRuntime } from "./runtime.ts";

export function resourceEndpoints(rt: ResourceRuntime): Endpoint[] {
  const { resource } = rt;
  const update = updateEndpoint(rt);
  const endpoints = [
    withOnConflict(rt, createEndpoint(rt), update),
    readEndpoint(rt),
    update,
    deleteEndpoint(rt),
    listEndpoint(rt),
  ];
  const operations = ["create", "read", "update", "delete", "list"] as const;
  // What the OpenAPI document describes them from.
  endpoints.forEach((e, i) => {
    e.doc = { resource: { name: resource.name, operation: operations[i]! }, tags: [resource.name] };
  });
  // PUT /<name>/:id: a create or a whole replacement, through the two endpoints above.
  const upsert = upsertEndpoint(rt, endpoints[0]!, endpoints[2]!);
  upsert.doc = { resource: { name: resource.name, operation: "upsert" }, tags: [resource.name] };
  // The types name the list method with English rules (`Pluralize<Name>`); when the real
  // pluralizer disagrees (sheep → sheep), the typed name answers too.
  const typed = typeLevelPlural(resource.name);
  if (typed !== resource.plural) endpoints[4]!.operationAliases = [`list${capitalize(typed)}`];
  // GET /<name> lists too: the client reaches the list without a pluralizer of its own.
  if (resource.plural !== resource.name) {
    endpoints.push({
      ...listEndpoint(rt),
      path: `/${resource.name}`,
      operationName: undefined,
      doc: { resource: { name: resource.name, operation: "list" }, tags: [resource.name] },
    });
  }
  endpoints.push(upsert);
  // GET /<plural>/aggregate: counts and sums under the list rule.
  const aggregate = aggregateEndpoint(rt);
  aggregate.doc = { resource: { name: resource.name, operation: "aggregate" }, tags: [resource.name] };
  if (typed !== resource.plural) aggregate.operationAliases = [`aggregate${capitalize(typed)}`];
  endpoints.push(aggregate);
  return endpoints;
}
