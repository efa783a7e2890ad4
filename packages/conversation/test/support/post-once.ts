import { request } from 'node:http';

/** POSTs `body` as JSON on a connection of its own that closes after the answer. */
export function postOnce(url: string, body: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch (error) {
            reject(error);
          }
        });
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(JSON.stringify(body));
  });
}
