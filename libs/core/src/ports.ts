/**
 * Ports: the interfaces adapters implement (libs/store, libs/seq, libs/bus) for both the
 * embedded engine and the distributed services. Each port has one contract suite.
 */
import type { TenantHooks } from './hooks/types.ts';
import type { TierThresholds } from './tiers.ts';
import type { Limits } from './config.ts';

// ---------------------------------------------------------------- timeline

// Declared in timeline-ports.ts to keep this file short; exported from here.
export type * from './timeline-ports.ts';

// ---------------------------------------------------------------- groups

// Group membership and group streams: group-ports.ts (the package entry exports it).

// ---------------------------------------------------------------- seq ceilings

/** A scope's epoch record as it stood just before an epoch was drawn (the handover record). */
export interface EpochRecord {
  /** The last epoch drawn. */
  epoch: number;
  /** The last clean release recorded (recordRelease): which epoch, at what wall-clock ms. */
  released?: { epoch: number; atMs: number };
}

export interface DrawnEpoch {
  epoch: number;
  /** The scope's record before this draw; undefined when no epoch was ever drawn for it. */
  before: EpochRecord | undefined;
}

/**
 * Persisted section ceilings (WeChat seqsvr): no seq above a section's ceiling is handed out
 * before the ceiling is durable. Writes carry the owner's epoch; a stale epoch is fenced.
 */
export interface SeqCeilingStore {
  /** A new, never-before-returned epoch for `scope` (persisted counter). */
  nextEpoch(scope: string): Promise<number>;
  /**
   * `nextEpoch`, also returning the scope's record as it stood just before this draw, in the
   * same atomic step: whether the previous holder released cleanly (core's handoverWait reads it).
   */
  drawEpoch(input: { scope: string }): Promise<DrawnEpoch>;
  /**
   * Records that the holder of `epoch` has stopped writing for good (everything it wrote has
   * settled), at `atMs` on its wall clock. Applied only while `epoch` is still the scope's last
   * drawn epoch, atomically with that check; false when a later epoch exists (the record would
   * then vouch for nothing: that later holder may be writing).
   */
  recordRelease(input: { scope: string; epoch: number; atMs: number }): Promise<boolean>;
  /**
   * Takes ownership of a section for `epoch` (must be >= the stored epoch, else FencedError)
   * and returns its persisted ceiling (0 when new).
   */
  claim(input: CeilingClaim): Promise<number>;
  /** Persists a higher ceiling; FencedError if another owner claimed with a higher epoch. */
  raise(input: CeilingRaise): Promise<void>;
}

/** SeqCeilingStore.claim: the section an owner takes, under its epoch. */
export interface CeilingClaim {
  section: string;
  epoch: number;
}

/** SeqCeilingStore.raise: the section's new ceiling, written under the owner's epoch. */
export interface CeilingRaise {
  section: string;
  ceiling: number;
  epoch: number;
}

// ---------------------------------------------------------------- jobs, work queue, push bus

// Declared in bus-ports.ts to keep this file short; exported from here.
export type * from './bus-ports.ts';

// ---------------------------------------------------------------- single-writer inbox and group streams

// Declared in single-writer-ports.ts to keep this file short; exported from here.
export type * from './single-writer-ports.ts';

// ---------------------------------------------------------------- operator settings

/** What an operator changes live (admin CLI): tier thresholds and work limits. */
export interface Settings {
  tiers: TierThresholds;
  limits: Limits;
  /** Per-tenant hook settings (overrides of the process defaults), by tenant id. */
  hooks: Record<string, TenantHooks>;
  /** Bumped on every save; watchers compare it to notice a change cheaply. */
  version: number;
}

export interface SettingsStore {
  /** The stored settings, or null when none were ever saved (defaults apply). */
  load(): Promise<Settings | null>;
  /**
   * Saves if the stored version still equals `expectedVersion` (0 = none stored yet) and
   * returns the saved settings with version = expectedVersion + 1; false when someone else
   * saved in between (the caller reloads and retries).
   */
  save(input: SettingsSave): Promise<Settings | false>;
}

/** SettingsStore.save: the new settings, and the version the caller read them against. */
export interface SettingsSave {
  settings: Omit<Settings, 'version'>;
  expectedVersion: number;
}

// ---------------------------------------------------------------- conversation index

// Declared beside its rules (conversations/port.ts) to keep this file short; exported from here.
export type {
  ConversationCatchUp,
  ConversationEntriesPage,
  ConversationIndex,
  ConversationListPage,
  ConversationRebuilder,
  ConversationRebuildReport,
  ConversationRef,
  ConversationListQuery,
  ConversationStreamSides,
  IndexedConversations,
  IndexedState,
  InboxEntries,
} from './conversations/port.ts';
