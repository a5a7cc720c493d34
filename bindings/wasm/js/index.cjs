'use strict';
// Entry point of the Node package: every generated binding, plus SCHEMA_VERSION as a constant.
const bindings = require('./examkit_wasm.js');

module.exports = Object.assign({}, bindings, { SCHEMA_VERSION: bindings.schemaVersion() });
