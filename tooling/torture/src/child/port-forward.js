// A fixed loopback port in front of the scripted provider. A handoff's fingerprint
// holds the provider's address, so the successor — run by the next child, after a
// kill — must reach the model at the same address the paused run used.
import { connect, createServer } from 'node:net';

/**
 * Listens on 127.0.0.1:`port` and pipes every connection to 127.0.0.1:`target`.
 * @param {number} port
 * @param {number} target
 * @returns {Promise<import('node:net').Server>}
 */
export function forwardPort(port, target) {
  const server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1');
    client.pipe(upstream);
    upstream.pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
