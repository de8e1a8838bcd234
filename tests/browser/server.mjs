// A tiny static server on 127.0.0.1 for the browser test: the installed npm
// package (as a browser sees it through an import map), the shared runner,
// the vectors as one JSON document, and the test page.
import { createServer } from "node:http";
import { readFileSync, existsSync, statSync } from "node:fs";
import { join, normalize, extname, sep } from "node:path";

const TYPES = {
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".wasm": "application/wasm",
  ".html": "text/html; charset=utf-8",
  ".ts": "text/plain; charset=utf-8",
};

/** Serves `mounts` ({ "/prefix/": dir }) and `routes` ({ "/path": () => [type, body] }). */
export function serve({ mounts, routes }) {
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    const path = decodeURIComponent(url.pathname);
    if (routes[path]) {
      const [type, body] = routes[path]();
      res.writeHead(200, { "content-type": type, "cache-control": "no-store" });
      res.end(body);
      return;
    }
    for (const [prefix, dir] of Object.entries(mounts)) {
      if (!path.startsWith(prefix)) continue;
      const root = normalize(dir).replace(/[\\/]+$/, "");
      const file = normalize(join(root, path.slice(prefix.length)));
      if (!file.startsWith(root + sep) || !existsSync(file) || !statSync(file).isFile()) break;
      res.writeHead(200, {
        "content-type": TYPES[extname(file)] || "application/octet-stream",
        "cache-control": "no-store",
      });
      res.end(readFileSync(file));
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found");
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}
