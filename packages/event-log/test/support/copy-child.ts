// A copy killed halfway: copies the log at argv[2] into the one at argv[3] (each a SQLite
// path or a JSON `{ "postgres": url }`), two rows a page, and after `stopAt` of the
// target's inserts — its transaction open, rows written and not committed — says `half`
// and blocks until it is killed.
import { writeSync } from 'node:fs';
import type { Kysely, KyselyPlugin } from 'kysely';
import { copyRows } from '../../src/copy-log.ts';
import { EventLog, type LogTarget } from '../../src/index.ts';
import type { LogDatabase } from '../../src/log-schema.ts';
import { openPostgres } from '../../src/open-postgres.ts';
import { connectSqlite } from '../../src/sqlite-connection.ts';

const [from, to, stopAt] = process.argv.slice(2) as [string, string, string];
const targetOf = (text: string): LogTarget => (text.startsWith('{') ? JSON.parse(text) : text);
async function handle(target: LogTarget): Promise<Kysely<LogDatabase>> {
  // Opened once as the log to bring its schema up to date, then raw.
  await (await EventLog.open(target)).close();
  return typeof target === 'string' ? connectSqlite(target).db : (await openPostgres(target.postgres)).db;
}
const dialect = (target: LogTarget): 'sqlite' | 'postgres' =>
  typeof target === 'string' ? 'sqlite' : 'postgres';
const source = targetOf(from);
const target = targetOf(to);
let inserts = 0;
const halfway: KyselyPlugin = {
  transformQuery(args) {
    if (args.node.kind === 'InsertQueryNode') {
      inserts += 1;
      if (inserts > Number(stopAt)) {
        writeSync(1, 'half\n');
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
      }
    }
    return args.node;
  },
  transformResult: async (args) => args.result,
};
writeSync(1, 'ready\n');
await copyRows(await handle(source), (await handle(target)).withPlugin(halfway), {
  sourceDialect: dialect(source),
  targetDialect: dialect(target),
  pageRows: 2,
});
writeSync(1, 'copied\n');
