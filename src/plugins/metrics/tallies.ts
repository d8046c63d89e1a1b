// Counters and histograms kept as plain numbers, for the series every request or statement
// touches. prom-client's own hash their labels on every `inc` and `observe` (sorted, validated,
// joined): measured at several µs a request, against a budget of about 2 µs for logs and metrics
// together. These are counted through an entry made once per label set, and handed to
// prom-client's registry, which formats them with its other series at a scrape.

type Labels = Readonly<Record<string, string | number>>;

/** A series as prom-client's registry reads a metric (`get()`), to format it. */
export interface Exposed {
  name: string;
  help: string;
  type: "counter" | "histogram" | "gauge";
  aggregator: "sum";
  values: { metricName?: string; labels: Labels; value: number }[];
}

/** A counter's or histogram's series for one label set. */
export interface TallyEntry {
  readonly labels: Labels;
  value: number;
}

export interface SpreadEntry {
  readonly labels: Labels;
  /** Observations per bucket (not cumulative); the last one is past every bound. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/** A counter: `entry(key, labels)` once per label set, then `entry.value += n`. */
export class Tally {
  readonly #entries = new Map<string, TallyEntry>();

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  entry(key: string, labels: () => Labels): TallyEntry {
    let found = this.#entries.get(key);
    if (!found) {
      found = { labels: labels(), value: 0 };
      this.#entries.set(key, found);
    }
    return found;
  }

  /** What prom-client's registry reads at a scrape. */
  get(): Promise<Exposed> {
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: "counter",
      aggregator: "sum",
      values: [...this.#entries.values()].map(({ labels, value }) => ({ labels, value })),
    });
  }
}

/** A histogram: `entry(key, labels)` once per label set, then `observe(entry, value)`. */
export class Spread {
  readonly #entries = new Map<string, SpreadEntry>();

  constructor(
    readonly name: string,
    readonly help: string,
    /** Upper bounds, ascending. */
    readonly bounds: readonly number[],
  ) {}

  entry(key: string, labels: () => Labels): SpreadEntry {
    let found = this.#entries.get(key);
    if (!found) {
      found = { labels: labels(), counts: new Array(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
      this.#entries.set(key, found);
    }
    return found;
  }

  observe(entry: SpreadEntry, value: number): void {
    const { bounds } = this;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    entry.counts[i]!++;
    entry.sum += value;
    entry.count++;
  }

  get(): Promise<Exposed> {
    const values: Exposed["values"] = [];
    for (const { labels, counts, sum, count } of this.#entries.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += counts[i]!;
        values.push({
          metricName: `${this.name}_bucket`,
          labels: { ...labels, le: bound },
          value: cumulative,
        });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: "+Inf" }, value: count });
      values.push({ metricName: `${this.name}_sum`, labels, value: sum });
      values.push({ metricName: `${this.name}_count`, labels, value: count });
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: "histogram",
      aggregator: "sum",
      values,
    });
  }
}

/** A gauge read when the registry formats it: its samples, none when there is nothing to say. */
export class Reading {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly values: () => Exposed["values"],
  ) {}

  get(): Promise<Exposed> {
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: "gauge",
      aggregator: "sum",
      values: this.values(),
    });
  }
}
