// Fails when a package's runtime dependencies go against the direction of imports
// drawn in ARCHITECTURE.md, or when its sources import a sibling it does not declare
// or a path inside it that the sibling does not export.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const allowed = {
  'agent-facts': [],
  'code-runtime': [],
  'event-log': ['agent-facts'],
  model: ['agent-facts'],
  tools: ['agent-facts', 'code-runtime'],
  mcp: ['agent-facts', 'tools'],
  conversation: ['agent-facts'],
  engine: ['agent-facts', 'event-log', 'model', 'tools', 'code-runtime'],
};

const problems = [];
for (const dir of readdirSync('packages')) {
  const file = join('packages', dir, 'package.json');
  if (!existsSync(file)) continue;
  const pkg = JSON.parse(readFileSync(file, 'utf8'));
  if (!(dir in allowed)) {
    problems.push(`packages/${dir}: not in the direction of imports; add it to tooling/check-deps.mjs`);
    continue;
  }
  const runtime = { ...(pkg.dependencies ?? {}), ...(pkg.peerDependencies ?? {}) };
  for (const name of Object.keys(runtime)) {
    if (!name.startsWith('@factum/')) continue;
    const target = name.slice('@factum/'.length);
    if (!allowed[dir].includes(target)) problems.push(`packages/${dir} depends on ${name} at run time`);
  }
  if (pkg.sideEffects !== false) problems.push(`packages/${dir}: "sideEffects": false is required`);
  for (const source of walk(join('packages', dir, 'src'))) {
    const text = readFileSync(source, 'utf8');
    for (const match of text.matchAll(/from\s+'(@factum\/[a-z-]+)(\/[^']*)?'/g)) {
      const [, name, sub] = match;
      if (!runtime[name]) problems.push(`${source} imports ${name} without a runtime dependency on it`);
      if (sub && !exportsOf(name).includes(`.${sub}`)) problems.push(`${source} deep-imports ${name}${sub}`);
    }
  }
}

/** The subpaths a sibling publishes (`.`, `./testing`, …): the only ones a package may import. */
function exportsOf(name) {
  const file = join('packages', name.slice('@factum/'.length), 'package.json');
  return existsSync(file) ? Object.keys(JSON.parse(readFileSync(file, 'utf8')).exports ?? {}) : [];
}

function* walk(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

// The app bundles the workspace packages into its dist and leaves their libraries to npm:
// every library a bundled package depends on must be a dependency of the app, or the
// installed app would carry a bundled copy of it (or fail to find it).
const app = JSON.parse(readFileSync(join('apps', 'factum', 'package.json'), 'utf8'));
for (const name of Object.keys(app.devDependencies ?? {}).filter((dep) => dep.startsWith('@factum/'))) {
  const file = join('packages', name.slice('@factum/'.length), 'package.json');
  if (!existsSync(file)) continue;
  for (const dep of Object.keys(JSON.parse(readFileSync(file, 'utf8')).dependencies ?? {})) {
    if (!dep.startsWith('@factum/') && !app.dependencies?.[dep])
      problems.push(
        `apps/factum bundles ${name}, which depends on ${dep}: add ${dep} to the app's dependencies`,
      );
  }
}

if (problems.length > 0) {
  console.error(`Dependency direction check failed:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
console.log('dependency direction: ok');
