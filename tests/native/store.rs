//! The storage suite (`store_cases`) on native SQLite.

#[path = "../store_cases/mod.rs"]
mod store_cases;

use crate::for_each_store_case;

use lossless_wasm::store::native::NativeSql;

macro_rules! native_case {
    ($name:ident) => {
        #[test]
        fn $name() {
            store_cases::$name(|| NativeSql::in_memory().unwrap());
        }
    };
}

for_each_store_case!(native_case);
