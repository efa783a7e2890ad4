import type { CatalogEntry, ToolCatalog, ToolSpec } from './tool-catalog.js';
import { EXEC_TOOL } from './tool-catalog.js';

/** The input schema of `exec`. */
export const EXEC_INPUT_SCHEMA = {
  type: 'object',
  properties: { code: { type: 'string', description: 'JavaScript to run; top-level await works' } },
  required: ['code'],
  additionalProperties: false,
} as const;

/** Whether Code mode cells may call this tool. */
export function isNestable(entry: CatalogEntry): boolean {
  return entry.registration.nesting === 'nestable';
}

/**
 * The one tool a model sees in Code mode (beside any `direct_only` tools): it runs a
 * JavaScript cell whose `tools.<name>(input)` calls are themselves recorded calls. Its
 * description lists every nestable tool with its input type.
 */
export function execSpec(catalog: ToolCatalog): ToolSpec {
  const tools = catalog.specs(isNestable);
  const lines = tools.map(
    (tool) => `- await tools.${tool.name}(input: ${JSON.stringify(tool.inputSchema)}): ${tool.description}`,
  );
  const description = [
    'Run JavaScript in a sandboxed cell. Top-level await works.',
    'Return output with text(value); report progress with notify(message).',
    'Each tool call from the cell is recorded and runs at most once.',
    tools.length === 0 ? 'No tools are available inside cells.' : 'Tools available inside the cell:',
    ...lines,
  ].join('\n');
  return { name: EXEC_TOOL, description, inputSchema: { ...EXEC_INPUT_SCHEMA } };
}
