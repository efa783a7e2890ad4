// Prints one closing line for the whole test run — "N passed, N failed, N skipped" —
// from every workspace package's vitest JSON report, so a run can be judged at a glance.
// Above it, each failure gets one short line (package, test, the start of its message):
// when only the end of a long run's output is kept, it still says what failed.
// A skipped test is a test that did not run: each gets a line, and the run fails (exit 1)
// when any was skipped, failed, or left no report — so a machine missing something shows.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
const failures = [];
const skips = [];
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
    failures.push(...describeFailures(dir, result));
    skipped += (result.numPendingTests ?? 0) + (result.numTodoTests ?? 0);
    skips.push(...describeSkips(dir, result));
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

/** One line per failed test, or per file that failed outside its tests. */
function describeFailures(dir, result) {
  const lines = [];
  for (const file of result.testResults ?? []) {
    const tests = (file.assertionResults ?? []).filter((test) => test.status === 'failed');
    for (const test of tests)
      lines.push(`${dir}: ${test.fullName ?? test.title}: ${brief(test.failureMessages)}`);
    if (file.status === 'failed' && tests.length === 0)
      lines.push(`${dir}: ${file.name.slice(file.name.indexOf(dir))}: ${brief([file.message])}`);
  }
  return lines;
}

/** One line per skipped or todo test. */
function describeSkips(dir, result) {
  const lines = [];
  for (const file of result.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      if (['pending', 'skipped', 'todo', 'disabled'].includes(test.status))
        lines.push(`${dir}: ${test.fullName ?? test.title}`);
    }
  }
  return lines;
}

/** The first lines of a failure's message, on one line and at most 900 characters. */
function brief(messages) {
  const text = (messages ?? []).filter(Boolean).join(' | ').split('\n').slice(0, 20).join(' ');
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 900 ? `${flat.slice(0, 900)}…` : flat || '(no message)';
}

for (const failure of failures) console.log(`FAILED ${failure}`);
for (const skip of skips) console.log(`SKIPPED ${skip}`);
if (missing.length > 0) console.log(`no test report from: ${missing.join(', ')}`);
console.log(`${passed} passed, ${failed + missing.length} failed, ${skipped} skipped`);
if (skipped > 0) console.log(`the run fails: ${skipped} skipped (every test must run on this machine)`);
if (failed + missing.length + skipped > 0) process.exitCode = 1;
