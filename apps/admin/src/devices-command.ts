/** `devices USER [--tenant t]`: a user's live sessions on every gateway (what the login policy acts on). */
import type { Command } from 'commander';
import type { DeviceSession } from '@seqline/core';
import { adminClientFor, outputOf } from './globals.ts';
import { emit, isoTime, table } from './output.ts';

interface DevicesView {
  devices: DeviceSession[];
}

export function registerDevicesCommand(program: Command): void {
  program
    .command('devices')
    .description("list a user's live sessions (device, platform, gateway) across gateways")
    .argument('<user>', 'user id')
    .option('--tenant <id>', 'tenant of the user', 'default')
    .action(async (user: string, opts: { tenant: string }, cmd: Command) => {
      const path = `devices/${encodeURIComponent(opts.tenant)}/${encodeURIComponent(user)}`;
      const view = await (await adminClientFor(cmd)).get<DevicesView>(path);
      emit(outputOf(cmd), view, () => describeDevices(user, opts.tenant, view));
    });
}

function describeDevices(user: string, tenant: string, v: DevicesView): string {
  const head = `devices of ${user} (tenant ${tenant}): ${v.devices.length} live`;
  if (v.devices.length === 0) return head;
  const rows = v.devices.map((d) => [d.dev ?? '-', d.plat ?? '-', d.gateway, isoTime(d.since), d.session]);
  return `${head}\n${table(['dev', 'plat', 'gateway', 'since', 'session'], rows)}`;
}
