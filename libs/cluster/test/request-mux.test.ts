/** RequestMux (ShardRequester's request/reply) against the real NATS. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import { NoRespondersError, RequestMux, RequestTimeoutError } from '../src/request-mux.ts';
import { newNats, probeServices, uniqueId } from './support/services.ts';

const services = await probeServices();
const text = (s: string) => new TextEncoder().encode(s);
const read = (data: Uint8Array) => new TextDecoder().decode(data);

describe.skipIf(!services.ok)('RequestMux', () => {
  let nc: NatsConnection;
  let responder: NatsConnection;
  const subject = uniqueId('seqline-test.mux.');

  beforeAll(async () => {
    nc = await newNats();
    responder = await newNats();
    // Echoes after `delay` ms (the request's body, as "delay:body"); 'silent' never answers.
    responder.subscribe(`${subject}.*`, {
      callback: (_err, msg) => {
        const [delay, body] = read(msg.data).split(':') as [string, string];
        if (body === 'silent') return;
        setTimeout(() => msg.respond(text(`re ${body} on ${msg.subject}`)), Number(delay));
      },
    });
    await responder.flush();
  });
  afterAll(async () => {
    await responder.close();
    await nc.close();
  });

  it('pairs each reply with its own request when many are in flight and replies come back out of order', async () => {
    const mux = new RequestMux(nc);
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) => mux.request(`${subject}.echo`, text(`${(200 - i) % 7}:${i}`), 2000).then((m) => read(m.data))),
    );
    expect(replies).toEqual(Array.from({ length: 200 }, (_, i) => `re ${i} on ${subject}.echo`));
    expect(mux.size).toBe(0);
    mux.close();
  });

  it('fails with NoRespondersError when nobody subscribes to the subject', async () => {
    const mux = new RequestMux(nc);
    await expect(mux.request(uniqueId('seqline-test.nobody.'), text('0:x'), 2000)).rejects.toBeInstanceOf(NoRespondersError);
    expect(mux.size).toBe(0);
    mux.close();
  });

  it('times out a request and ignores its reply when it comes later', async () => {
    const mux = new RequestMux(nc);
    await expect(mux.request(`${subject}.slow`, text('300:late'), 50)).rejects.toBeInstanceOf(RequestTimeoutError);
    expect(mux.size).toBe(0);
    // The late reply lands on the mux's inbox while this request waits: it must not be taken for this one.
    const next = await mux.request(`${subject}.slow`, text('400:next'), 2000);
    expect(read(next.data)).toBe(`re next on ${subject}.slow`);
    mux.close();
  });

  it('fails what is in flight on close, and every later request at once', async () => {
    const mux = new RequestMux(nc);
    const waiting = mux.request(`${subject}.silent`, text('0:silent'), 5000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    mux.close();
    await expect(waiting).rejects.toThrow('request mux closed');
    await expect(mux.request(`${subject}.echo`, text('0:after'), 1000)).rejects.toThrow('request mux closed');
  });

  it('fails what is in flight when the connection closes', async () => {
    const own = await newNats();
    const mux = new RequestMux(own);
    const waiting = mux.request(`${subject}.silent`, text('0:silent'), 5000);
    await own.close();
    await expect(waiting).rejects.toThrow();
    expect(mux.size).toBe(0);
  });
});
