export { openEmbeddedEngine, type EmbeddedEngine, type EmbeddedEngineOptions } from './embedded/engine.ts';
