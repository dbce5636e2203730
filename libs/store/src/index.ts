/**
 * `@seqline/store`: the embedded engine (LMDB), all the single-process server loads. The CQL
 * adapter is the `@seqline/store/scylla` entry (src/scylla/index.ts), so importing this one
 * never loads cassandra-driver.
 */
export { openEmbeddedEngine, rollBackThreadWrites, type EmbeddedEngine, type EmbeddedEngineOptions } from './embedded/engine.ts';
