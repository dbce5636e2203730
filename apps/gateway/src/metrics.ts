/** Prometheus metrics of one gateway (prom-client), registered on the registry it is given. */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export class GatewayMetrics {
  readonly connections: Gauge;
  readonly connectionsOpened: Counter;
  readonly connectionsClosed: Counter<'code'>;
  readonly frames: Counter<'op'>;
  readonly errors: Counter<'code'>;
  readonly opDuration: Histogram<'op'>;
  readonly httpRequests: Counter<'route' | 'status'>;
  readonly pushes: Counter;
  readonly forcedCloses: Counter<'reason'>;
  readonly displacements: Counter<'outcome'>;

  constructor(readonly registry: Registry) {
    const registers = [registry];
    // Reuse metrics already registered (two gateways sharing one registry add up).
    const existing = <T>(name: string): T | undefined => registry.getSingleMetric(name) as T | undefined;
    this.connections =
      existing('seqline_gateway_connections') ??
      new Gauge({ name: 'seqline_gateway_connections', help: 'Open WebSocket connections', registers });
    this.connectionsOpened =
      existing('seqline_gateway_connections_opened_total') ??
      new Counter({ name: 'seqline_gateway_connections_opened_total', help: 'WebSocket connections accepted', registers });
    this.connectionsClosed =
      existing('seqline_gateway_connections_closed_total') ??
      new Counter({
        name: 'seqline_gateway_connections_closed_total',
        help: 'WebSocket connections gone, by the close code the gateway saw (1006: no close frame)',
        labelNames: ['code'],
        registers,
      });
    this.frames =
      existing('seqline_gateway_frames_total') ??
      new Counter({
        name: 'seqline_gateway_frames_total',
        help: 'Client requests by op (WebSocket frames and HTTP calls); op="invalid" for undecodable frames',
        labelNames: ['op'],
        registers,
      });
    this.errors =
      existing('seqline_gateway_errors_total') ??
      new Counter({ name: 'seqline_gateway_errors_total', help: 'Error replies by protocol code', labelNames: ['code'], registers });
    this.opDuration =
      existing('seqline_gateway_op_duration_seconds') ??
      new Histogram({
        name: 'seqline_gateway_op_duration_seconds',
        help: 'Time from decoded request to reply, by op',
        labelNames: ['op'],
        registers,
        buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      });
    this.httpRequests =
      existing('seqline_gateway_http_requests_total') ??
      new Counter({
        name: 'seqline_gateway_http_requests_total',
        help: 'HTTP requests by route and status',
        labelNames: ['route', 'status'],
        registers,
      });
    this.pushes =
      existing('seqline_gateway_pushes_total') ??
      new Counter({ name: 'seqline_gateway_pushes_total', help: 'Push frames sent to sockets', registers });
    this.forcedCloses =
      existing('seqline_gateway_forced_closes_total') ??
      new Counter({
        name: 'seqline_gateway_forced_closes_total',
        help: 'Sockets closed by the gateway, by reason',
        labelNames: ['reason'],
        registers,
      });
    this.displacements =
      existing('seqline_gateway_login_displacements_total') ??
      new Counter({
        name: 'seqline_gateway_login_displacements_total',
        help: 'Logins under a login policy, by how their displacement ended: told, bound (served before every displaced session was told), failed',
        labelNames: ['outcome'],
        registers,
      });
  }
}
