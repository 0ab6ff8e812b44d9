// Serves the demo page on localhost only: demo/web, the transcript, the built package
// (dist/pkg) and the browser build of sql.js from node_modules. Nothing else is reachable.
// Usage: node demo/web/server.mjs [port]   (prints the URL; Ctrl-C stops it)
import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ALLOWED = ["demo/", "dist/pkg/", "node_modules/sql.js/dist/"].map((p) => join(ROOT, p));
const TYPES = { ".html": "text/html; charset=utf-8", ".css": "text/css", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".json": "application/json" };

const server = createServer((req, res) => {
  let pathname = decodeURIComponent(new URL(req.url, "http://localhost").pathname);
  if (pathname === "/") {
    res.writeHead(302, { location: "/demo/web/" }).end();
    return;
  }
  if (pathname.endsWith("/")) pathname += "index.html";
  const path = normalize(join(ROOT, pathname));
  const allowed = ALLOWED.some((dir) => path.startsWith(dir)) && !path.includes(`${sep}..${sep}`);
  if (!allowed || !existsSync(path) || !statSync(path).isFile()) {
    res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    return;
  }
  res.writeHead(200, { "content-type": TYPES[extname(path)] ?? "application/octet-stream", "cache-control": "no-cache" });
  createReadStream(path).pipe(res);
});

const port = Number(process.argv[2] ?? process.env.PORT ?? 8411);
server.listen(port, "127.0.0.1", () => {
  const url = `http://127.0.0.1:${server.address().port}/demo/web/`;
  if (!existsSync(join(ROOT, "dist/pkg/shim/library.js"))) console.error("warning: dist/pkg is missing; run bash scripts/build.sh");
  console.log(`lossless-wasm demo page: ${url}`);
  console.log("(localhost only, no API key; the conversation is stored in your browser. Ctrl-C to stop.)");
});
