//! Each misuse of the macros fails to compile with a message that says what to do
//! (`tests/ui/*.rs`, with the expected output beside each in `*.stderr`).

#[test]
fn misuses_are_refused_with_a_clear_message() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
