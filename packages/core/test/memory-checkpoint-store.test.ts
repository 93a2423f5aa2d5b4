import { describe, it } from 'vitest';
import { MemoryCheckpointStore } from '@signalyard/core';
import { checkpointStoreConformance } from '@signalyard/core/testing';

checkpointStoreConformance('MemoryCheckpointStore', () => new MemoryCheckpointStore(), { describe, it });
