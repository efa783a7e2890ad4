import { canonicalJson, contentDigest } from '@factum/agent-facts';
import { compileSchema, type JsonSchema, type SchemaCheck } from './input-schema.js';
import { RecoveryPolicy as Policies, type RecoveryPolicy } from './recovery-policy.js';
import { ToolCatalogError } from './tool-catalog-error.js';
import type { ToolRegistration } from './tool-registration.js';

/** The name of Code mode's one tool; no registration may take it. */
export const EXEC_TOOL = 'exec';

const namePattern = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/** A registered tool with its schemas compiled. */
export type CatalogEntry = {
  readonly registration: ToolRegistration;
  readonly inputJson: JsonSchema;
  readonly checkInput: SchemaCheck;
  readonly checkOutput: SchemaCheck | undefined;
  readonly recovery: RecoveryPolicy;
};

/** A tool as models see it. */
export type ToolSpec = {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
};

/**
 * The tools a run may call. Built once and immutable: names are unique, `exec` is
 * reserved for Code mode, and every schema is compiled up front so a bad one fails
 * here, not in the middle of a run.
 *
 * @example
 * const catalog = new ToolCatalog([{
 *   definition: { name: 'echo', description: 'echo the input', inputSchema: { type: 'object' } },
 *   handler: ToolHandler.immediate({ names: () => ['echo'], invoke: async (_, input) => input }),
 *   nesting: 'nestable',
 *   semantics: 'parallel',
 * }]);
 */
export class ToolCatalog {
  readonly #entries = new Map<string, CatalogEntry>();

  constructor(registrations: Iterable<ToolRegistration> = []) {
    for (const registration of registrations) {
      const name = registration.definition.name;
      if (name === EXEC_TOOL) {
        throw new ToolCatalogError(
          'reserved_tool_name',
          name,
          '`exec` is reserved for Code mode: pick another name',
        );
      }
      if (!namePattern.test(name)) {
        throw new ToolCatalogError(
          'invalid_registration',
          name,
          `tool name ${JSON.stringify(name)} must start with a letter and hold only letters, digits, _ and - (64 at most)`,
        );
      }
      if (this.#entries.has(name)) {
        throw new ToolCatalogError(
          'duplicate_tool',
          name,
          `two tools are named ${name}: names must be unique`,
        );
      }
      const input = compileSchema(name, registration.definition.inputSchema);
      const output =
        registration.definition.outputSchema && compileSchema(name, registration.definition.outputSchema);
      this.#entries.set(name, {
        registration,
        inputJson: input.json,
        checkInput: input.check,
        checkOutput: output?.check,
        recovery: registration.recovery ?? Policies.neverAutoRetry(),
      });
    }
  }

  /** The entry of a tool, if the catalog has it. */
  get(name: string): CatalogEntry | undefined {
    return this.#entries.get(name);
  }

  /** Every tool name, in registration order. */
  names(): string[] {
    return [...this.#entries.keys()];
  }

  /** The tools as models see them, in registration order. */
  specs(filter: (entry: CatalogEntry) => boolean = () => true): ToolSpec[] {
    return [...this.#entries.values()].filter(filter).map((entry) => ({
      name: entry.registration.definition.name,
      description: entry.registration.definition.description,
      inputSchema: entry.inputJson,
    }));
  }

  /**
   * A digest of everything a model is told about the tools and how they may run. Two
   * catalogs with equal fingerprints offer the same tools; a handoff successor must
   * match its predecessor's.
   */
  fingerprint(): string {
    const material = [...this.#entries.values()].map((entry) => ({
      name: entry.registration.definition.name,
      description: entry.registration.definition.description,
      input: entry.inputJson,
      nesting: entry.registration.nesting,
      semantics: entry.registration.semantics,
      recovery: entry.recovery.kind,
    }));
    return contentDigest(canonicalJson(material));
  }
}
