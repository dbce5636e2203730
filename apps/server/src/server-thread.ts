/**
 * One thread of a threaded `npm start` (threads-supervisor.ts starts it): the embedded server
 * on its seat of the thread mesh, owning the shards s ≡ self (mod threads), its gateway on the
 * shared port. It runs the shutdown step the main thread names, one at a time, so that every
 * thread finishes a step before any starts the next.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import { joinThreads } from '@seqline/bus/threads';
import { startEmbeddedServer } from './embedded-server.ts';
import { serverThreadParts } from './server-thread-parts.ts';
import type { FromThread, ServerThreadData, ToThread } from './thread-messages.ts';

const data = workerData as ServerThreadData;
const parent = parentPort;
if (parent === null) throw new Error('server-thread.ts runs as a worker thread of threads-supervisor.ts');
const logger = pino({ level: data.config.LOG_LEVEL, redact: ['token', 'req.headers.authorization'] }).child({ thread: data.seat.self });
// Joined first: ports to threads restarted later may come while this one still starts.
const hub = joinThreads(data.seat, logger);
const tell = (msg: FromThread): void => parent.postMessage(msg);

const started = startEmbeddedServer(data.config, logger, undefined, serverThreadParts(hub, data.threads, logger));

parent.on('message', (msg: ToThread) => {
  if (msg.op === 'peer') return hub.connect(msg.thread, msg.port);
  const step = msg.step;
  started
    .then(async (server) => {
      await server.steps[step]();
      // The buses are closed: the hub goes with them, before the engine.
      if (step === 'closeBuses') await hub.close();
    })
    .then(
      () => ({ op: 'stepDone', step }) as const,
      (err: unknown) => {
        logger.error({ err, step }, 'shutdown step failed');
        return { op: 'stepDone', step, error: err instanceof Error ? err.message : String(err) } as const;
      },
    )
    .then(
      (done) => {
        if (step === 'closeEngine') logger.flush();
        tell(done);
        // The last step: nothing holds the thread any more once its port to the main thread closes.
        if (step === 'closeEngine') parent.close();
      },
      () => undefined,
    );
});
// A start that fails throws here, uncaught: the thread ends, and the supervisor sees it.
tell({ op: 'listening', port: (await started).port });
