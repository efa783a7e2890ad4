import { contentDigest } from '@factum/agent-facts';
import { type ReconcileDecision, RecoveryPolicy, type ToolRegistration } from '@factum/tools';
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { BINARY_LIMIT_BYTES, fileContent } from './file-content.js';
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

/** `read_file`: a file's text (or a labelled base64 of a binary file's head), bounded. Re-run by recovery. */
export function readFileTool(workspace: Workspace): ToolRegistration {
  return defineTool({
    name: 'read_file',
    description: `Read a file in the workspace. Text comes back as UTF-8, at most ${READ_LIMIT_BYTES} bytes (or maxBytes); a binary file comes back as base64 of its first ${BINARY_LIMIT_BYTES} bytes.`,
    input: ReadFileInput,
    nesting: 'nestable',
    semantics: 'parallel',
    readOnly: true,
    recovery: RecoveryPolicy.idempotent(),
    run: async ({ path, maxBytes }) => {
      const opened = await workspace.openFile(path);
      try {
        const size = opened.stats.size;
        const buffer = Buffer.alloc(Math.min(maxBytes ?? READ_LIMIT_BYTES, size));
        const { bytesRead } = await opened.handle.read(buffer, 0, buffer.length, 0);
        return fileContent(workspace.relative(opened.real), buffer.subarray(0, bytesRead), size);
      } finally {
        await opened.handle.close();
      }
    },
  });
}

/**
 * `write_file`: replaces a file's content (creating parent directories). It runs alone
 * (`exclusive`). The file is opened beneath the workspace and verified before it is
 * truncated, and never through a second hard link. After a crash it reconciles: the
 * file's digest says whether the intended content is there, which is evidence, not a guess.
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
      const opened = await workspace.openFile(path, { write: true });
      try {
        // Truncated only now: the descriptor was verified, so an outside file is never emptied.
        await opened.handle.truncate(0);
        await opened.handle.writeFile(content, 'utf8');
        await opened.handle.sync();
      } finally {
        await opened.handle.close();
      }
      return writeResult(workspace.relative(opened.real), content);
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
  let bytes: Buffer;
  try {
    const opened = await workspace.openFile(path);
    try {
      // Only content of the intended size can be the intended content: no need to read more.
      const intendedSize = Buffer.byteLength(content);
      if (opened.stats.size !== intendedSize) {
        return {
          kind: 'unknown',
          note: `${path} holds ${opened.stats.size} bytes, not the ${intendedSize} the write intended: it may never have happened, or was overwritten since`,
        };
      }
      bytes = Buffer.alloc(intendedSize);
      await opened.handle.read(bytes, 0, intendedSize, 0);
    } finally {
      await opened.handle.close();
    }
  } catch (error) {
    if (WorkspaceError.isInstance(error) && error.code === 'not_found') {
      return {
        kind: 'failed',
        error: { code: 'not_applied', message: `${path} does not exist: the write did not happen` },
      };
    }
    return { kind: 'unknown', note: error instanceof Error ? error.message : String(error) };
  }
  const actual = contentDigest(bytes);
  if (actual === intended) {
    return { kind: 'succeeded', value: { ...writeResult(path, content), reconciled: true } };
  }
  return {
    kind: 'unknown',
    note: `${path} holds other content (${actual}) than the write intended (${intended}): it may never have happened, or was overwritten since`,
  };
}
