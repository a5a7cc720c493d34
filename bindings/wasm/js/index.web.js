// Entry point of the browser package (an ES module): every generated binding, plus SCHEMA_VERSION.
// Call the default export once (`await init()`, or `initSync({ module })`) before anything else.
export { default } from './examkit_wasm.js';
export * from './examkit_wasm.js';

/** The schema version this engine validates (the same value `schemaVersion()` returns). */
export const SCHEMA_VERSION = '@SCHEMA_VERSION@';
