import { buildWeb } from '../scripts/build-web.ts';

/** Tests run from sources: the browser bundle the server serves is built from them first. */
export default async function setup(): Promise<void> {
  await buildWeb();
}
