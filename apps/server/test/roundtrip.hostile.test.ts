/**
 * Class 5 of docs/security.md against the embedded server (`npm start`: LMDB, one process):
 * bodies with "__proto__" keys, edge numbers and deep nesting come back exactly from every read
 * path; unpaired surrogates are refused up front (scenarios in ./hostile/roundtrip-scenarios.ts).
 */
import { describeRoundTrip } from './hostile/roundtrip-scenarios.ts';
import { useEmbeddedServer } from './support/embedded-suite.ts';

// Three members make a group huge (read-fanout), two make it large (write-fanout, queued).
const suite = useEmbeddedServer({ settings: { tiers: { smallBelow: 2, largeBelow: 3, hysteresis: 0 } } });

describeRoundTrip('embedded', () => ({
  connect: suite.connect,
  httpUrl: `http://127.0.0.1:${suite.server.port}`,
  tenant: 'default',
  user: suite.user,
  hugeFiller: [],
  numRuns: 200,
}));
