import { z } from 'zod';
import { factObject } from './fact-object.js';
import { FactumError } from './factum-error.js';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A workspace named by the id of its marker file, so a moved checkout keeps its identity. */
export const WorkspaceIdentitySchema = z.string().regex(/^workspace:[0-9a-f-]{36}$/);
export type WorkspaceIdentity = z.infer<typeof WorkspaceIdentitySchema>;

/** Builders for workspace identities. */
export const WorkspaceIdentity = {
  /** `workspace:<uuid>` from a marker id; a value that is not a UUID is a typed error. */
  fromMarkerId(markerId: string): WorkspaceIdentity {
    if (!uuid.test(markerId)) {
      throw new FactumError(
        'invalid_workspace_marker',
        `workspace marker id is not a UUID: ${JSON.stringify(markerId)}`,
      );
    }
    return `workspace:${markerId.toLowerCase()}`;
  },
} as const;

/** How tools reach the model: each tool directly, or one `exec` tool running code cells. */
export const ToolModeSchema = z.enum(['direct', 'code_mode']);
export type ToolMode = z.infer<typeof ToolModeSchema>;

/**
 * How an invocation was configured, as the log keeps it. The object is strict: there is
 * no field for credentials or headers, and an unknown field is a parse error, so a
 * secret cannot ride along by accident.
 */
export const InvocationConfigurationSchema = factObject({
  cwd: z.string(),
  toolMode: ToolModeSchema,
  workspaceIdentity: WorkspaceIdentitySchema.optional(),
});
export type InvocationConfiguration = z.infer<typeof InvocationConfigurationSchema>;
