import {
  appendFileSync,
  chmodSync,
  closeSync,
  existsSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { DirectoryFs } from '@factum/event-log';
import { appDirectoryFs, makeDurableDirectory } from './durable-directory.js';

/** The log's file in a data directory. */
export const LOG_FILE = 'events.sqlite';

/**
 * Makes `dataDir` private before the log opens it: the directory 0700, every file in
 * it 0600 (a looser one left by an older version is tightened). The log file is
 * created 0600 first because SQLite gives its `-wal` and `-shm` files the log file's
 * mode. When this creates the directory inside a git work tree, the directory is added
 * to the `.gitignore` beside it, so transcripts are never committed by accident. Every
 * directory it creates, and the log file, is fsynced into its parent.
 */
export function prepareDataDirectory(
  dataDir: string,
  options: { readonly log?: boolean; readonly fs?: DirectoryFs } = {},
): void {
  const existed = existsSync(dataDir);
  // Each level made is fsynced into its parent: a power cut never takes the directory.
  const fs = options.fs ?? appDirectoryFs;
  makeDurableDirectory(dataDir, 0o700, fs);
  chmodSync(dataDir, 0o700);
  // Without a SQLite log (a server on PostgreSQL keeps only its token here) no log file is made.
  const logFile = join(dataDir, LOG_FILE);
  if (options.log !== false && !existsSync(logFile)) {
    closeSync(openSync(logFile, 'a', 0o600));
    fs.fsyncDirectory(resolve(dataDir));
  }
  for (const name of readdirSync(dataDir)) {
    const path = join(dataDir, name);
    const info = lstatSync(path);
    if (info.isFile() && (info.mode & 0o077) !== 0) chmodSync(path, 0o600);
  }
  if (!existed && insideGitWorkTree(dirname(dataDir))) ignoreInGit(dataDir);
}

function insideGitWorkTree(directory: string): boolean {
  for (let at = directory; ; at = dirname(at)) {
    if (existsSync(join(at, '.git'))) return true;
    if (dirname(at) === at) return false;
  }
}

function ignoreInGit(dataDir: string): void {
  const file = join(dirname(dataDir), '.gitignore');
  const entry = `/${basename(dataDir)}/`;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const lines = current.split(/\r?\n/).map((line) => line.trim());
  if (lines.includes(entry) || lines.includes(`${basename(dataDir)}/`) || lines.includes(basename(dataDir)))
    return;
  const separator = current === '' || current.endsWith('\n') ? '' : '\n';
  appendFileSync(file, `${separator}# Factum's log and state (local, private)\n${entry}\n`);
}

/**
 * Whether a data directory holds a log. The commands that only read (`log`, `show`,
 * `recover`, `approvals`) answer "empty" without one, and create nothing: looking at a
 * directory where Factum never ran must not leave a `.factum/` behind.
 */
export function hasLog(dataDir: string): boolean {
  return existsSync(join(dataDir, LOG_FILE));
}

/** The default data directory: `.factum` in the current working directory. */
export function defaultDataDir(cwd = process.cwd()): string {
  return resolve(cwd, '.factum');
}
