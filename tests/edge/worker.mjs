// The module worker run by workerd: imports the package's `workerd` entry
// (synchronous init from the imported WebAssembly.Module), runs every vector
// bundled in as a module, plus the portable API checks, and answers with the
// report as JSON.
import * as api from "./pkg/entry.js";
import { runVectors } from "./js-common/vectors.mjs";
import { apiChecks } from "./js-common/api-checks.mjs";
import { WASM_NOT_APPLICABLE } from "./js-common/not-applicable.mjs";
import vectors from "./vectors-data.mjs";

export default {
  async fetch() {
    try {
      const report = runVectors(api, { vectors, runtime: "wasm-workerd", notApplicable: WASM_NOT_APPLICABLE });
      const checks = apiChecks(api);
      return Response.json({ report, checks });
    } catch (e) {
      return Response.json({ error: String((e && e.stack) || e) }, { status: 500 });
    }
  },
};
