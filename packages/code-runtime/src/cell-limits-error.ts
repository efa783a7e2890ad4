import { CodeRuntimeError } from './code-runtime-error.js';

/**
 * A {@link CellLimits} override was refused: an unknown field, a value that is
 * not an integer, or one outside the allowed range. `field` names the field.
 */
export class CellLimitsError extends CodeRuntimeError {
  /** The offending field, as spelled in the override. */
  readonly field: string;

  constructor(field: string, message: string) {
    super('invalid_cell_limits', message);
    this.name = 'CellLimitsError';
    this.field = field;
  }
}
