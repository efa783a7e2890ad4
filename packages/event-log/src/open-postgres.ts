import { EventLogError } from './event-log-error.js';
import type { OpenDatabase } from './open-database.js';

/** PostgreSQL support lands with the several-hosts work; until then the target is refused clearly. */
export async function openPostgres(_url: string): Promise<OpenDatabase> {
  throw new EventLogError(
    'open_failed',
    'PostgreSQL targets are not supported by this version: use a SQLite path',
  );
}
