// What a migration plan is made of: its steps, and the refusal of a change the planner will not
// make. Apart from the planner, so the pieces that add steps (foreign keys, search indexes) and
// the planner do not import each other.

import type { DialectName } from "../dialect.ts";

export interface MigrationStep {
  /** What the step does, in words: `add column product.colour`. */
  description: string;
  /** Loses or invents data; refused unless destructive changes are allowed. */
  destructive: boolean;
  statements: string[];
}

export interface MigrationPlan {
  dialect: DialectName;
  steps: MigrationStep[];
  /** The tables the desired schema holds (recorded, so a later plan knows which tables are crudkit's). */
  tables: string[];
}

/** A change the planner will not make, with what to do about it. */
export class MigrationRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MigrationRefused";
  }
}
