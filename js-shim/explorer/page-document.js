// The context explorer as one self-contained HTML document: the page's styles and scripts
// (js-shim/explorer/page/) inlined into index.html, with the page's capability (capability.js)
// in a meta tag. The Control UI frames the page in `<iframe sandbox="allow-scripts">`: its origin
// is `null`, and the gateway's cookie grant reaches the frame's navigation but no script or
// style the page would load by URL (a module script from origin `null` is a CORS request the
// gateway answers without CORS headers; a stylesheet answered so is blocked). So the one
// navigation delivers everything, and the page's only further requests are its API calls.
//
// The page's modules stay ordinary files (the demo page imports dag.js too): app.js is inlined
// as a module script and its `import "./dag.js"` is resolved by an import map to a data: URL
// holding dag.js.
import { readFile } from "node:fs/promises";

const PAGE_DIR = new URL("./page/", import.meta.url);
const MARKERS = {
  style: "<!-- explorer:style -->",
  script: "<!-- explorer:script -->",
  capability: "<!-- explorer:capability -->",
};
let template;

/** Text that cannot close the element it is inlined into (a `</script` would end it early). */
function inlinable(text, tag, file) {
  if (new RegExp(`</${tag}`, "i").test(text))
    throw new Error(`explorer page: ${file} contains "</${tag}" and cannot be inlined`);
  return text;
}

async function buildTemplate() {
  const read = (name) => readFile(new URL(name, PAGE_DIR), "utf8");
  const [html, css, app, dag] = await Promise.all([
    read("index.html"),
    read("style.css"),
    read("app.js"),
    read("dag.js"),
  ]);
  for (const [name, marker] of Object.entries(MARKERS)) {
    if (html.split(marker).length !== 2)
      throw new Error(`explorer page: index.html must hold the marker ${marker} once (${name})`);
  }
  const importMap = JSON.stringify({
    imports: { "./dag.js": `data:text/javascript;base64,${Buffer.from(dag).toString("base64")}` },
  });
  const [head, rest] = html
    .replace(MARKERS.style, `<style>\n${inlinable(css, "style", "style.css")}</style>`)
    .replace(
      MARKERS.script,
      () =>
        `<script type="importmap">${importMap}</script>\n<script type="module">\n${inlinable(app, "script", "app.js")}</script>`,
    )
    .split(MARKERS.capability);
  return { head, rest };
}

/**
 * The page's HTML for one serving, carrying `capability` (already minted for the page's agent).
 * The files are read once per process.
 */
export async function explorerDocument(capability) {
  template ??= buildTemplate().catch((err) => {
    template = undefined;
    throw err;
  });
  const { head, rest } = await template;
  if (!/^[0-9a-z]+\.[A-Za-z0-9_-]+$/.test(capability)) throw new Error("explorer page: malformed capability");
  return `${head}<meta name="explorer-capability" content="${capability}">${rest}`;
}
