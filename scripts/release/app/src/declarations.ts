// Pulls every package's published declarations into one program that tsconfig.declarations.json
// checks with `skipLibCheck: false`, so a broken .d.ts fails here instead of silently becoming
// `any` in users' editors (the app's own configs skip library checks, as most apps do).
// @signalyard/ai-sdk is left out: its declarations import the `ai` package's, which need the DOM
// lib and do not pass `exactOptionalPropertyTypes`; the app's own type checks cover its API.
// @signalyard/mcp is left out too: its declarations import the MCP SDK's (`@modelcontextprotocol/sdk`),
// which this check does not hold third-party packages to; main.ts and mcp-server.ts cover its API.
// @signalyard/nats is left out for the same reason (its declarations import @nats-io's); main.ts uses it.
export type * as cli from '@signalyard/cli';
export type * as core from '@signalyard/core';
export type * as coreTesting from '@signalyard/core/testing';
export type * as crew from '@signalyard/crew';
export type * as fsm from '@signalyard/fsm';
export type * as inspector from '@signalyard/inspector';
export type * as otel from '@signalyard/otel';
export type * as pipeline from '@signalyard/pipeline';
export type * as router from '@signalyard/router';
export type * as sessions from '@signalyard/sessions';
export type * as storePostgres from '@signalyard/store-postgres';
export type * as storeSqlite from '@signalyard/store-sqlite';
export type * as signalyard from 'signalyard';
export type * as keywordGate from 'signalyard-plugin-keyword-gate';
