// The summary DAG drawing is shared with the context explorer the plugin serves in OpenClaw's
// gateway: one module, shipped in the package (js-shim/explorer/page/dag.js).
export * from "/dist/pkg/shim/explorer/page/dag.js";
