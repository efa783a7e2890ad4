// A child process that forks a session and kills itself (SIGKILL) inside the fork's
// commit: `before` once its row is written and COMMIT has not run, `after` once it is
// durable and nobody has been told.
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { Engine } from '../../src/index.ts';

const [where, when] = process.argv.slice(2) as [string, 'before' | 'after'];
// A SQLite file path, or `{"postgres": url}` as JSON.
const target = where.startsWith('{') ? (JSON.parse(where) as { postgres: string }) : where;
const die = () => process.kill(process.pid, 'SIGKILL');
const log = await EventLog.open(target, {
  hooks: {
    beforeCommit: () => when === 'before' && die(),
    afterCommit: () => when === 'after' && die(),
  },
});
const engine = new Engine({ log, models: new ModelExecutor({ timeoutMs: 5_000 }), code: new CodeExecutor() });
await engine.fork({ session: 'session' }, { newSession: 'forked' });
// Reaching this line means no hook fired: the parent sees a clean exit, not a SIGKILL.
process.exit(0);
