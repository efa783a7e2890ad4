import { FactumError } from '@factum/agent-facts';

const marker = Symbol.for('@factum/tool-catalog-error');

/** A catalog that cannot be built: a duplicate or reserved name, an invalid schema. */
export class ToolCatalogError extends FactumError {
  override readonly code: 'duplicate_tool' | 'reserved_tool_name' | 'invalid_schema' | 'invalid_registration';
  readonly tool: string;
  readonly [marker] = true;

  constructor(
    code: ToolCatalogError['code'],
    tool: string,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(code, message, options);
    this.code = code;
    this.tool = tool;
  }

  static override isInstance(value: unknown): value is ToolCatalogError {
    return FactumError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
