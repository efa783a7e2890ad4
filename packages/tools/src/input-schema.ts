import { Ajv, type ValidateFunction } from 'ajv';
import formatsModule from 'ajv-formats';
import { z } from 'zod';
import { ToolCatalogError } from './tool-catalog-error.js';

/** A JSON Schema object, as tools publish their inputs to models. */
export type JsonSchema = Record<string, unknown>;

/** Checks a value against a tool's schema; says why it does not match. */
export type SchemaCheck = (value: unknown) => { ok: true } | { ok: false; message: string };

/** A schema as a registration may give it: JSON Schema, or a zod schema. */
export type SchemaInput = JsonSchema | z.ZodType;

function isZod(schema: SchemaInput): schema is z.ZodType {
  return typeof (schema as { safeParse?: unknown }).safeParse === 'function' && '_zod' in schema;
}

type AddFormats = (ajv: Ajv) => Ajv;
// The package is CommonJS with an ES-style declaration: Node hands the function over
// as the default import, while the declaration describes it as `.default`.
const addFormats: AddFormats =
  (formatsModule as unknown as { default?: AddFormats }).default ?? (formatsModule as unknown as AddFormats);

// Formats (`uri`, `email`, `date-time`, …) are checked, as MCP servers' schemas expect;
// an unknown one would otherwise be ignored with a warning on stderr.
const ajv = addFormats(new Ajv({ allErrors: false, strict: false, validateSchema: true }));

/**
 * Turns a registration's schema into the JSON Schema shown to models and a check for
 * inputs. A zod schema is converted with zod's own JSON Schema support and checked with
 * zod itself (refinements included); a JSON Schema is compiled with Ajv. An invalid
 * schema is a `ToolCatalogError` naming the tool.
 */
export function compileSchema(tool: string, schema: SchemaInput): { json: JsonSchema; check: SchemaCheck } {
  if (isZod(schema)) {
    let json: JsonSchema;
    try {
      json = z.toJSONSchema(schema, { io: 'input' }) as JsonSchema;
    } catch (error) {
      throw new ToolCatalogError(
        'invalid_schema',
        tool,
        `the zod schema of ${tool} has no JSON Schema form`,
        { cause: error },
      );
    }
    delete json.$schema;
    return {
      json,
      check: (value) => {
        const result = schema.safeParse(value);
        if (result.success) return { ok: true };
        const issue = result.error.issues[0];
        return {
          ok: false,
          message: `${issue?.path.join('.') || '(input)'}: ${issue?.message ?? 'invalid'}`,
        };
      },
    };
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new ToolCatalogError(
      'invalid_schema',
      tool,
      `the input schema of ${tool} must be a JSON Schema object`,
    );
  }
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ToolCatalogError(
      'invalid_schema',
      tool,
      `the input schema of ${tool} is not valid JSON Schema: ${reason}`,
      {
        cause: error,
      },
    );
  }
  return {
    json: schema,
    check: (value) => {
      if (validate(value)) return { ok: true };
      const error = validate.errors?.[0];
      return { ok: false, message: `${error?.instancePath || '(input)'} ${error?.message ?? 'is invalid'}` };
    },
  };
}
