/**
 * The NATS device bus runs the DeviceBus contract: each gateway its own connection, through a
 * proxy that can hold what it sends (a slow gateway); a gateway with its network down has a
 * closed connection. The shared server is never stopped.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { delayingProxy, deviceBusContract, eventually, requireServices, uniqueName, type DelayingProxy } from '@seqline/testing';
import { createNatsDeviceBus, type NatsDeviceBus } from '../src/index.ts';
import { NATS_URL, probeNats } from './nats-harness.ts';

const probe = await probeNats();

if (requireServices(probe, 'NATS device bus', 'a NATS server', 'start one with scripts/services.sh up or set NATS_URL')) {
  const server = new URL(NATS_URL);
  let root = uniqueName('dev');
  const conns: NatsConnection[] = [];
  const proxies: DelayingProxy[] = [];

  deviceBusContract(`nats at ${NATS_URL}`, {
    async open(holder, { logger, answerWaitMs, maxWaitMs, offline }) {
      const proxy = await delayingProxy({ host: server.hostname, port: Number(server.port || 4222) });
      proxies.push(proxy);
      const nc = await connect({ servers: proxy.url, name: 'seqline-device-contract', timeout: 5_000 });
      if (offline) await nc.close();
      else conns.push(nc);
      const bus = createNatsDeviceBus(nc, holder, {
        root,
        logger,
        answerWaitMs,
        maxWaitMs,
        presenceHeartbeatMs: 100,
        followPresence: true,
      });
      return { bus, delay: (ms) => (proxy.delayMs = ms) };
    },
    network: {
      known: (asker, tenant, user, count) =>
        eventually(() => ((asker as NatsDeviceBus).gatewaysHolding(tenant, user)?.length ?? 0) >= count, 10_000),
    },
    async cleanup() {
      for (const nc of conns.splice(0)) await nc.close();
      for (const proxy of proxies.splice(0)) await proxy.close();
      root = uniqueName('dev'); // a fresh presence for the next test
    },
  });
}
