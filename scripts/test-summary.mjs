// Prints the line CI reads, "N passed, N failed", from vitest's JSON report. A run that failed
// before the tests (install, lint, type check) counts as one failure so it can never read green.

import { existsSync, readFileSync } from "node:fs";

const [file, status] = process.argv.slice(2);
let passed = 0;
let failed = 0;
if (file && existsSync(file)) {
  const report = JSON.parse(readFileSync(file, "utf8"));
  passed = report.numPassedTests;
  failed = report.numFailedTests + (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  // A test file that failed to load has no tests in the counts; count it.
  failed += report.testResults.filter((r) => r.status === "failed" && r.assertionResults.length === 0).length;
}
if (status !== "0" && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
