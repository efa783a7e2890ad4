// The model side of `turn_cpu_vs_undurable_loop`: a loopback Chat Completions server in a
// child process, so that its CPU is not charged to the client measured. It answers by the
// request, not by a script position: a tool call to `noop` unless the last message is a
// tool result, then a short text answer in eight deltas (the peers benchmark's turn).
// Each answer is OpenAI's streaming shape (role chunk, deltas, finish chunk, usage
// chunk, `[DONE]`), one SSE event per write.
import { createServer } from 'node:http';

const frame = (value) => `data: ${JSON.stringify(value)}\n\n`;
let answers = 0;

function chunks(deltas, finishReason) {
  answers += 1;
  const base = { id: `chatcmpl-${answers}`, object: 'chat.completion.chunk', created: 1, model: 'agent' };
  const choice = (delta, finish) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  return [
    frame(choice({ role: 'assistant', content: '' }, null)),
    ...deltas.map((delta) => frame(choice(delta, null))),
    frame(choice({}, finishReason)),
    frame({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 } }),
    'data: [DONE]\n\n',
  ];
}

const toolCall = () =>
  chunks(
    [
      {
        tool_calls: [
          { index: 0, id: `call_${answers}`, type: 'function', function: { name: 'noop', arguments: '{}' } },
        ],
      },
    ],
    'tool_calls',
  );
const text = () =>
  chunks(
    ['The ', 'no-op ', 'tool ', 'ran; ', 'all ', 'is ', 'done', '.'].map((content) => ({ content })),
    'stop',
  );

const server = createServer((request, response) => {
  const parts = [];
  request.on('data', (part) => parts.push(part));
  request.on('end', () => {
    let body = {};
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8'));
    } catch {}
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const last = body.messages?.[body.messages.length - 1];
    for (const event of last?.role === 'tool' ? text() : toolCall()) response.write(event);
    response.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (message) => {
  if (message === 'cpu') process.send({ cpu: process.cpuUsage() });
  if (message === 'close') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));
