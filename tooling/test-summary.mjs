// Prints one closing line for the whole test run — "N passed, N failed, N skipped" —
// from every workspace package's vitest JSON report, so a run can be judged at a glance.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
for (const group of ['packages', 'apps', 'tooling']) {
  if (!existsSync(group)) continue;
  for (const name of readdirSync(group)) {
    const dir = join(group, name);
    if (!existsSync(join(dir, 'vitest.config.ts'))) continue;
    const report = join(dir, 'test-results', 'vitest.json');
    if (!existsSync(report)) {
      missing.push(dir);
      continue;
    }
    const result = JSON.parse(readFileSync(report, 'utf8'));
    passed += result.numPassedTests ?? 0;
    failed += (result.numFailedTests ?? 0) + countFilesFailedWithoutFailedTests(result);
    skipped += (result.numPendingTests ?? 0) + (result.numTodoTests ?? 0);
  }
}

function countFilesFailedWithoutFailedTests(result) {
  // A file that failed to load (or in a hook) has no failed test to count it; a file
  // that failed because a test in it failed is counted by its tests. (vitest's own
  // numFailedTestSuites also counts each describe block, so it cannot be used here.)
  return (result.testResults ?? []).filter(
    (file) =>
      file.status === 'failed' && !(file.assertionResults ?? []).some((test) => test.status === 'failed'),
  ).length;
}

if (missing.length > 0) console.log(`no test report from: ${missing.join(', ')}`);
console.log(`${passed} passed, ${failed + missing.length} failed, ${skipped} skipped`);
