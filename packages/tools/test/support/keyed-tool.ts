import { RecoveryPolicy, ToolCatalog, ToolHandler } from '../../src/index.ts';
import { charge } from './dedupe-service.ts';

/** An idempotent `charge` tool that sends its idempotency key; `afterEffect` runs once the service answered. */
export function keyedCatalog(url: string, afterEffect: () => void = () => {}): ToolCatalog {
  return new ToolCatalog([
    {
      definition: { name: 'charge', description: 'charge an amount', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate({
        names: () => ['charge'],
        async invoke(_name, _input, context) {
          const answer = await charge(url, context.idempotencyKey, context.signal);
          afterEffect();
          return answer;
        },
      }),
      nesting: 'nestable',
      semantics: 'parallel',
      recovery: RecoveryPolicy.idempotent(),
    },
  ]);
}
