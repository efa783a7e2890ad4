import { constants } from 'node:fs';
import { mkdir, open, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { contentDigest } from '@factum/agent-facts';
import { type ReconcileDecision, RecoveryPolicy, type ToolRegistration } from '@factum/tools';
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import type { Workspace } from './workspace.js';
import { WorkspaceError } from './workspace-error.js';

/** What `read_file` returns at most, unless the call asks for less. */
export const READ_LIMIT_BYTES = 256 * 1024;

const pathField = z.string().min(1).describe('a path relative to the workspace root');

/** The input of `write_file`. */
export const WriteFileInput = z.strictObject({
  path: pathField,
  content: z.string().describe('the whole new content of the file (UTF-8)'),
});

const ReadFileInput = z.strictObject({
  path: pathField,
  maxBytes: z.number().int().positive().max(READ_LIMIT_BYTES).optional(),
});

/** `read_file`: a file's text, bounded. Reading again is harmless, so recovery re-runs it. */
export function readFileTool(workspace: Workspace): ToolRegistration {
  return defineTool({
    name: 'read_file',
    description: `Read a text file in the workspace. Returns at most ${READ_LIMIT_BYTES} bytes (or maxBytes).`,
    input: ReadFileInput,
    nesting: 'nestable',
    semantics: 'parallel',
    recovery: RecoveryPolicy.idempotent(),
    run: async ({ path, maxBytes }) => {
      const real = await workspace.existing(path);
      const info = await stat(real);
      if (!info.isFile()) throw new WorkspaceError('not_a_file', `${path} is not a regular file`);
      const limit = maxBytes ?? READ_LIMIT_BYTES;
      const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        const buffer = Buffer.alloc(Math.min(limit, info.size));
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
        return {
          path: workspace.relative(real),
          bytes: info.size,
          content: buffer.subarray(0, bytesRead).toString('utf8'),
          truncated: info.size > bytesRead,
        };
      } finally {
        await handle.close();
      }
    },
  });
}

/**
 * `write_file`: replaces a file's content (creating parent directories). It runs alone
 * (`exclusive`). After a crash it reconciles: the file's digest says whether the
 * intended content is there, which is evidence, not a guess.
 */
export function writeFileTool(workspace: Workspace): ToolRegistration {
  return defineTool({
    name: 'write_file',
    description: 'Create or replace a text file in the workspace with the given content.',
    input: WriteFileInput,
    nesting: 'nestable',
    semantics: 'exclusive',
    recovery: RecoveryPolicy.reconcile((operation) => reconcileWrite(workspace, operation.input)),
    run: async ({ path, content }) => {
      const target = await workspace.writable(path);
      await mkdir(dirname(target), { recursive: true });
      // O_NOFOLLOW: a symlink planted after the check cannot redirect the write.
      const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
      const handle = await open(target, flags, 0o644);
      try {
        await handle.writeFile(content, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      return writeResult(workspace.relative(target), content);
    },
  });
}

function writeResult(path: string, content: string) {
  return { path, bytes: Buffer.byteLength(content), digest: contentDigest(content) };
}

/** Compares the file on disk with what the uncertain write intended. Runs no write. */
export async function reconcileWrite(workspace: Workspace, input: unknown): Promise<ReconcileDecision> {
  const parsed = WriteFileInput.safeParse(input);
  if (!parsed.success) return { kind: 'unknown', note: 'the recorded input is not a write_file input' };
  const { path, content } = parsed.data;
  const intended = contentDigest(content);
  let real: string;
  try {
    real = await workspace.existing(path);
  } catch (error) {
    if (WorkspaceError.isInstance(error) && error.code === 'not_found') {
      return {
        kind: 'failed',
        error: { code: 'not_applied', message: `${path} does not exist: the write did not happen` },
      };
    }
    return { kind: 'unknown', note: error instanceof Error ? error.message : String(error) };
  }
  const actual = contentDigest(await readFile(real));
  if (actual === intended) {
    return { kind: 'succeeded', value: { ...writeResult(path, content), reconciled: true } };
  }
  return {
    kind: 'unknown',
    note: `${path} holds other content (${actual}) than the write intended (${intended}): it may never have happened, or was overwritten since`,
  };
}
