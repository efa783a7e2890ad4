import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { cac } from 'cac';
import type { CliContext } from '../src/commands/cli-context.ts';
import { registerServe } from '../src/commands/serve.ts';
import { Terminal } from '../src/terminal/terminal.ts';

/** `factum serve …` in this process, with its output captured and its signals in the test's hand. */
export function serveInProcess(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  let out = '';
  const sink = () =>
    new Writable({
      write(chunk, _encoding, done) {
        out += String(chunk);
        done();
      },
    });
  const signals = new EventEmitter();
  const context: CliContext = {
    cwd,
    env: { NO_COLOR: '1', ...env },
    terminal: new Terminal({ stdout: sink(), stderr: sink(), env: { NO_COLOR: '1' } }),
    self: { execPath: process.execPath, args: [] },
    version: '0.0.0-test',
    signals: signals as unknown as CliContext['signals'],
  };
  const cli = cac('factum');
  cli.option('--dir <path>', 'data directory');
  registerServe(cli, context);
  cli.parse(['node', 'factum', 'serve', ...args], { run: false });
  const exit = Promise.resolve(cli.runMatchedCommand()) as Promise<number>;
  return {
    exit,
    output: () => out,
    signal: (name: 'SIGINT' | 'SIGTERM') => signals.emit(name),
    async url(): Promise<string> {
      for (let attempt = 0; attempt < 200 && !/timeline\s+(\S+)/.test(out); attempt += 1) {
        await Promise.race([exit, new Promise((resolve) => setTimeout(resolve, 25))]);
      }
      const match = /timeline\s+(http:\S+)\//.exec(out);
      if (!match?.[1]) throw new Error(`no URL printed:\n${out}`);
      return match[1];
    },
  };
}
