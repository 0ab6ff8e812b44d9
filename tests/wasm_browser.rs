//! The same wasm-bindgen tests in headless Chromium (`CHROMEDRIVER=/usr/bin/chromedriver`,
//! options in `webdriver.json`).
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

mod embed_cases;
mod store_cases;
mod wasm_cases;
