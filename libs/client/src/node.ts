/** The Node entry (`@seqline/client/node`): everything of the main entry, plus the file store. */
export * from './index.ts';
export { FileMaxSeqStore } from './file-max-seq-store.ts';
