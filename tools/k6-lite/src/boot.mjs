// Worker-thread entry of a k6-lite VU. Plain JavaScript because TypeScript support (tsx) is
// registered here: Node 20 workers do not inherit the parent's --import hooks.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

registerTsx();
register(new URL('./hooks.ts', import.meta.url));
await import('./vu/main.ts');
