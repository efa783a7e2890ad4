import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { factsIn, runCli, temporaryDirectory } from './cli-harness.ts';

describe('factum run --script', () => {
  it('plays a script offline: a tool call that writes a file, then streamed text, recorded as facts', async () => {
    using dir = temporaryDirectory();
    const script = join(dir.path, 'replies.json');
    writeFileSync(
      script,
      JSON.stringify({
        replies: [
          {
            reasoning: 'The user wants a file.',
            toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content: 'hi there' } }],
          },
          { text: ['Wrote ', 'hello.txt.'], chunkDelayMs: 5 },
        ],
      }),
    );
    // No base URL, model or key anywhere: the script is the provider.
    const result = await runCli(['run', 'write hello.txt', '--script', script, '--dir', dir.dataDir], {
      cwd: dir.workspace,
      env: { FACTUM_BASE_URL: '', FACTUM_API_KEY: '', OPENAI_API_KEY: '' },
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Wrote hello.txt.');
    expect(readFileSync(join(dir.workspace, 'hello.txt'), 'utf8')).toBe('hi there');
    const facts = (await factsIn(dir.dataDir)).map(({ fact }) => fact);
    const completed = facts.filter((fact) => fact.kind === 'model_completed');
    expect(completed).toHaveLength(2);
    expect(completed[0]).toMatchObject({
      output: {
        parts: [{ kind: 'reasoning' }, { kind: 'tool_call', call: { id: 'call-1-1', name: 'write_file' } }],
      },
    });
  });

  it('FACTUM_SCRIPT works like --script, with the Responses wire chosen by --provider', async () => {
    using dir = temporaryDirectory();
    const script = join(dir.path, 'replies.json');
    writeFileSync(script, JSON.stringify([{ text: 'scripted over responses' }]));
    const result = await runCli(['run', 'hi', '--provider', 'openai_responses', '--dir', dir.dataDir], {
      cwd: dir.workspace,
      env: { FACTUM_SCRIPT: script },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('scripted over responses');
    const facts = (await factsIn(dir.dataDir)).map(({ fact }) => fact);
    expect(facts.find((fact) => fact.kind === 'model_requested')).toMatchObject({
      routeIdentity: expect.stringMatching(/^openai_responses http:\/\/127\.0\.0\.1:\d+\/v1 scripted$/),
    });
  });

  it('a refusal is printed and the run fails with model_refused, exit code 1', async () => {
    using dir = temporaryDirectory();
    const script = join(dir.path, 'replies.json');
    writeFileSync(script, JSON.stringify([{ refusal: "I can't help with that." }]));
    const result = await runCli(['run', 'do something bad', '--script', script, '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("I can't help with that.");
    expect(result.stdout).toContain('failed {model_refused}');
    const facts = (await factsIn(dir.dataDir)).map(({ fact }) => fact);
    expect(facts.find((fact) => fact.kind === 'model_completed')).toMatchObject({
      output: { parts: [{ kind: 'refusal', text: "I can't help with that." }], finishReason: 'refusal' },
    });
  });

  it('a scripted provider error reaches the run as the typed error it maps to', async () => {
    using dir = temporaryDirectory();
    const script = join(dir.path, 'replies.json');
    writeFileSync(
      script,
      JSON.stringify([
        { error: { status: 429, type: 'insufficient_quota', message: 'You exceeded your quota' } },
      ]),
    );
    const result = await runCli(['run', 'hi', '--script', script, '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(result.code).toBe(1);
    expect(`${result.stdout}${result.stderr}`).toContain('You exceeded your quota');
    expect(`${result.stdout}${result.stderr}`).toContain('quota_exceeded');
  });

  it('a script that does not match the format is a usage error naming the file and the field', async () => {
    using dir = temporaryDirectory();
    const script = join(dir.path, 'broken.json');
    writeFileSync(script, JSON.stringify([{ txt: 'typo' }]));
    const result = await runCli(['run', 'hi', '--script', script, '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(script);
    expect(result.stderr).toContain('txt');
    // Each problem is named by its field, on one line, with no literal `\n` in it.
    writeFileSync(
      script,
      JSON.stringify([{ text: 5 }, { error: { status: 200 } }, { toolCalls: [{ arguments: {} }] }]),
    );
    const fields = await runCli(['run', 'hi', '--script', script, '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(fields.code).toBe(2);
    expect(fields.stderr).toContain('[0].text: expected a string, or a non-empty list of strings');
    expect(fields.stderr).toContain('[1].error.status: Too small: expected number to be >=400');
    expect(fields.stderr).toContain('[2].toolCalls[0].name: Invalid input: expected string');
    expect(fields.stderr).not.toContain('Invalid input;');
    expect(fields.stderr).not.toContain('\\n');
    expect(fields.stderr.trim().split('\n')).toHaveLength(1);
    const missing = await runCli(['run', 'hi', '--script', 'nope.json', '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(join(dir.workspace, 'nope.json'));
  });
});
