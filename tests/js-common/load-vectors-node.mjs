// Node-side loader for the conformance vectors (Node, Bun and Deno hosts, and
// the Node processes that feed the browser and workerd runs). Discovers every
// *.json in tests/vectors at run time (or $OJS_VECTORS_DIR).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const VECTORS_DIR = process.env.OJS_VECTORS_DIR || fileURLToPath(new URL("../vectors/", import.meta.url));

/** [{ file, title, cases }] for every *.json file, sorted by name. */
export function loadVectors(dir = VECTORS_DIR) {
  const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
  return files.map((file) => {
    const doc = JSON.parse(readFileSync(join(dir, file), "utf8"));
    return { file, title: doc.title, cases: doc.cases };
  });
}

/** The number of cases across the files (what each runtime must report). */
export function countCases(vectors) {
  return vectors.reduce((n, f) => n + (Array.isArray(f.cases) ? f.cases.length : 0), 0);
}
