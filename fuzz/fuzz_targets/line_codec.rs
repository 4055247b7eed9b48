#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::line_codec::run(data));
