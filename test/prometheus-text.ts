// Prometheus text as Prometheus's own client library parses it (Debian's python3-prometheus-client,
// which .ci/run installs): text it cannot read fails the test.

import { execFileSync } from "node:child_process";

export interface PromSample {
  /** The sample's own name: `x_total`, `x_bucket`, `x_count`, `x_sum`, or the gauge's. */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromFamily {
  name: string;
  type: string;
  samples: PromSample[];
}

const PARSE = `
import json, math, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    out.append({"name": family.name, "type": family.type, "samples": [
        {"name": s.name, "labels": s.labels, "value": None if math.isnan(s.value) else s.value}
        for s in family.samples]})
print(json.dumps(out))
`;

export function parsePrometheusText(text: string): PromFamily[] {
  return JSON.parse(execFileSync("/usr/bin/python3", ["-c", PARSE], { input: text, encoding: "utf8" }));
}

/** The value of the sample `name` whose labels include `labels`; undefined when there is none. */
export function sampleValue(
  families: readonly PromFamily[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const family of families)
    for (const sample of family.samples)
      if (
        sample.name === name &&
        Object.entries(labels).every(([key, value]) => sample.labels[key] === value)
      )
        return sample.value;
  return undefined;
}
