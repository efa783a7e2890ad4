// Runs the writer thread from its TypeScript source, inside the workspace only (tests,
// benchmarks): a thread does not inherit the loader that runs the main thread's sources.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
