#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::uri_template::run(data));
