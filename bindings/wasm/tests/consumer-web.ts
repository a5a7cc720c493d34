// A typed consumer of the browser package (ES module): init, then the same typed API as in Node.
import init, { validate, SCHEMA_VERSION } from "../pkg-web/index.js";
import type { Outcome, InitOutput } from "../pkg-web/index.js";

export async function check(text: string, wasmUrl: URL): Promise<string> {
  const instance: InitOutput = await init({ module_or_path: wasmUrl });
  const outcome: Outcome = validate(text);
  const version: "service-marking-import-v1" = SCHEMA_VERSION;
  return `${version} ${typeof instance.memory} ${outcome.valid ? outcome.status : outcome.errors.length}`;
}
