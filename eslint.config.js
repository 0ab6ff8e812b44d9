// ESLint's configuration for the shim (js-shim/): @eslint/js's recommended rules and a few that
// catch real bugs cheaply, with the globals of where each file runs, so a name that does not
// exist there (`process` in a browser worker, `window` in Node) is an error. Layout is Prettier's
// (.prettierrc.json): no stylistic rule is enabled here. CI runs `eslint js-shim` in the lint-js
// suite of scripts/test.sh; an error fails the run.
import js from "@eslint/js";
import globals from "globals";

/** The names both of two global sets define: for code that must run in either place. */
const both = (a, b) => Object.fromEntries(Object.entries(a).filter(([name]) => name in b));

export default [
  // Only the shim is linted (`eslint js-shim`); the built package and the Rust build never are.
  { ignores: ["dist/**", "target/**"] },
  {
    files: ["js-shim/**/*.js"],
    ...js.configs.recommended,
    languageOptions: {
      ecmaVersion: "latest",
      sourceType: "module",
      // Host-independent code (engine/, errors.js, library.js, browser/open-engine.js) runs in
      // Node, in a page and in a worker: only what all three have.
      globals: globals["shared-node-browser"],
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      ...js.configs.recommended.rules,
      // `_` marks a name that is unused on purpose (`for (const _ of iterator)` to run or count it).
      "no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      eqeqeq: ["error", "smart"],
      "no-var": "error",
      "prefer-const": "error",
    },
  },
  {
    // Node only: the plugin's entry, the worker thread and files, PostgreSQL, the operator CLI,
    // the recall tools, and the explorer's server side (its page is below).
    files: [
      "js-shim/index.js",
      "js-shim/node/**/*.js",
      "js-shim/postgres/**/*.js",
      "js-shim/operator/**/*.js",
      "js-shim/openclaw/**/*.js",
      "js-shim/explorer/*.js",
    ],
    languageOptions: { globals: globals.node },
  },
  {
    // A page: the explorer's page, and the page side of the browser engine's worker.
    files: ["js-shim/explorer/page/**/*.js", "js-shim/browser/engine-in-worker.js"],
    languageOptions: { globals: globals.browser },
  },
  {
    // IndexedDB and the store's lock run in a page or in the engine's worker: only what both have.
    files: ["js-shim/browser/indexeddb-store.js", "js-shim/browser/store-lock.js"],
    languageOptions: { globals: both(globals.browser, globals.worker) },
  },
  {
    // The browser engine's worker: a classic dedicated worker script (sql.js needs importScripts).
    files: ["js-shim/browser/engine-worker-main.js"],
    languageOptions: { sourceType: "script", globals: globals.worker },
  },
];
