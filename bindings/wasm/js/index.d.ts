export * from "./examkit_wasm.js";

/** The schema version this engine validates (the same value `schemaVersion()` returns). */
export declare const SCHEMA_VERSION: "@SCHEMA_VERSION@";
