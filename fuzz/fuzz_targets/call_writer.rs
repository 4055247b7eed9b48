#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::call_writer::run(data));
