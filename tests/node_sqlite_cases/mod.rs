//! The storage suite (`store_cases`) on node:sqlite, through the shim's adapter
//! (`js-shim/node/sqlite.js`), from wasm in Node. Fails loudly when this Node lacks node:sqlite.

use js_sys::{Function, Promise, Reflect};
use lossless_wasm::wasm::{SqlJsDatabase, SqlJsSql};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

const LOAD_ADAPTER: &str = r#"
  if (!process.getBuiltinModule?.("node:sqlite")) {
    throw new Error("node:sqlite is missing in Node " + process.versions.node + ": put a Node >= 22.5 first on PATH (scripts/test.sh uses the OpenClaw host's Node 26)");
  }
  return import(process.cwd() + "/js-shim/node/sqlite.js");
"#;

async fn adapter() -> JsValue {
    let promise: Promise = Function::new_no_args(LOAD_ADAPTER)
        .call0(&JsValue::NULL)
        .expect("node:sqlite adapter")
        .unchecked_into();
    JsFuture::from(promise)
        .await
        .expect("loading js-shim/node/sqlite.js")
}

fn open_memory(module: &JsValue) -> SqlJsSql {
    let ctor: Function = Reflect::get(module, &"NodeSqliteDatabase".into())
        .unwrap()
        .unchecked_into();
    let args = js_sys::Array::of1(&":memory:".into());
    let db: SqlJsDatabase = Reflect::construct(&ctor, &args)
        .expect("new NodeSqliteDatabase")
        .unchecked_into();
    SqlJsSql::new(db).unwrap()
}

macro_rules! node_sqlite_case {
    ($name:ident) => {
        #[wasm_bindgen_test]
        async fn $name() {
            let module = adapter().await;
            crate::store_cases::$name(|| open_memory(&module));
        }
    };
}

crate::for_each_store_case!(node_sqlite_case);
