/**
 * `@seqline/bus/threads`: the bus ports between the threads of one embedded process — inbox
 * writes by request/reply, pushes and device kicks routed by presence, job notices — over
 * node:worker_threads message ports. Like `@seqline/bus/local`, importing it never loads @nats-io.
 */
export { ThreadHub } from './threads-hub.ts';
export type { ThreadHubOptions, ThreadPort } from './threads-hub.ts';
export type { ChannelHandlers, ThreadChannel } from './threads-channel.ts';
export { ThreadUnavailableError } from './threads-frames.ts';
export { joinThreads, seatPorts, shardsOfThread, threadMesh, threadOfShard } from './threads-mesh.ts';
export type { ThreadSeat } from './threads-mesh.ts';
export { createThreadPushBus } from './threads-push-bus.ts';
export type { ThreadPushBus, ThreadPushBusOptions } from './threads-push-bus.ts';
export { createThreadDeviceBus } from './threads-device-bus.ts';
export type { ThreadDeviceBus, ThreadDeviceBusOptions } from './threads-device-bus.ts';
export { ThreadInboxWriter } from './threads-inbox-writer.ts';
export type { ShardsOwner, ThreadInboxWriterOptions } from './threads-inbox-writer.ts';
export { createThreadWorkQueue } from './threads-work-queue.ts';
export type { ThreadWorkQueue, ThreadWorkQueueOptions } from './threads-work-queue.ts';
export { ThreadGroupStreamWriter } from './threads-group-stream-writer.ts';
export type { ThreadGroupStreamWriterOptions } from './threads-group-stream-writer.ts';
